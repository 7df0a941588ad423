import { Injectable } from '@nestjs/common';
import type { SchemaObject } from '@nestjs/swagger';
import { compileInput } from '@corepool/core/host';
import { publishedSchema } from '../http/openapi';
import { TaskRegistry } from '@corepool/core';

export interface TaskCatalogEntry {
  readonly name: string;
  readonly description: string;
  /** True when the body is raw bytes and `input` describes the query string. */
  readonly binary: boolean;
  /** JSON Schema of the accepted fields, defaults included. */
  readonly input: SchemaObject;
  readonly contentTypes: readonly string[];
  readonly output: 'json' | 'bytes';
  readonly limits: Readonly<Record<string, number | string>>;
}

/**
 * The task catalog, described from the tasks' own input schemas: the same
 * objects are compiled into the input checks, so the catalog, the OpenAPI
 * document and validation can never disagree.
 */
@Injectable()
export class TaskCatalogService {
  private readonly entries: readonly TaskCatalogEntry[];

  constructor(registry: TaskRegistry) {
    this.entries = registry.list().map((task) => {
      // Compiled now, at startup: a schema Ajv refuses stops the start, not a request.
      compileInput(task.input);
      const input = publishedSchema(task.input);
      return {
        name: task.name,
        description: task.description,
        binary: task.binary !== undefined,
        input,
        contentTypes: task.binary?.contentTypes ?? ['application/json'],
        output: task.binary?.output ?? 'json',
        limits: task.limits ?? {},
      };
    });
  }

  list(): readonly TaskCatalogEntry[] {
    return this.entries;
  }
}
