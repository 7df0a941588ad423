import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app-config';
import { loadConfig } from './load-config';

/**
 * Provides the one AppConfig. `forRoot()` reads the process environment (the
 * only place outside main.ts's bootstrap that does); tests pass a config.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig = loadConfig(process.env)): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
