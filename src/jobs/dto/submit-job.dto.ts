import { boolean, inputSchema, jsonObject, string } from '@corepool/core';

/** `POST /api/jobs` with a JSON body: a JSON task and its input. */
export interface SubmitJob {
  task: string;
  input?: object;
  encrypt?: boolean;
}

export const submitJobInput = inputSchema<SubmitJob>('SubmitJob', {
  task: string({ maxLength: 100 }, { description: 'A task name from `GET /api/tasks`.' }),
  input: jsonObject({
    optional: true,
    description: "The task's input, checked as `POST /api/tasks/:name` checks its body.",
  }),
  encrypt: boolean({
    optional: true,
    description: 'Store and return the result encrypted (AES-256-GCM, `RESULT_ENCRYPTION_KEY`).',
  }),
});
