import { Global, Module } from '@nestjs/common';
import { WorkersModule } from '../workers/workers.module';
import { ShutdownService } from './shutdown.service';

/** The process lifecycle: graceful shutdown; its phase is what readiness reports. */
@Global()
@Module({
  imports: [WorkersModule],
  providers: [ShutdownService],
  exports: [ShutdownService],
})
export class LifecycleModule {}
