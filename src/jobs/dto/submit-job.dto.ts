import { IsBoolean, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';

/** `POST /api/jobs` with a JSON body: a JSON task and its input. */
export class SubmitJobDto {
  /** A task name from `GET /api/tasks`. */
  @IsString()
  @MaxLength(100)
  task!: string;

  /** The task's input, validated as `POST /api/tasks/:name` validates its body. */
  @IsOptional()
  @IsObject()
  input?: object;

  /** Store and return the result encrypted (AES-256-GCM, `RESULT_ENCRYPTION_KEY`). */
  @IsOptional()
  @IsBoolean()
  encrypt?: boolean;
}
