import { Injectable } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
// class-transformer keeps its metadata in this module; @Type() targets are read from it.
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { TaskRegistry } from '../tasks/task-registry';

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
 * The task catalog, described from the tasks' own class-validator DTOs, so the
 * catalog, the OpenAPI document and validation can never disagree.
 */
@Injectable()
export class TaskCatalogService {
  private readonly entries: readonly TaskCatalogEntry[];
  /** JSON Schemas by DTO class name, for the OpenAPI document. */
  readonly schemas: Readonly<Record<string, SchemaObject>>;

  constructor(registry: TaskRegistry) {
    const schemas = validationMetadatasToSchemas({
      classValidatorMetadataStorage: getMetadataStorage(),
      classTransformerMetadataStorage: defaultMetadataStorage,
      refPointerPrefix: '#/components/schemas/',
    }) as Record<string, SchemaObject>;
    this.entries = registry.list().map((task) => {
      const input = withDefaults(schemas[task.input.name] ?? { type: 'object' }, new task.input());
      schemas[task.input.name] = input;
      return {
        name: task.name,
        description: task.description,
        binary: task.binary !== undefined,
        input,
        contentTypes: task.binary?.contentTypes ?? ['application/json'],
        output: task.binary?.output ?? 'json',
        limits: task.limits,
      };
    });
    this.schemas = schemas;
  }

  list(): readonly TaskCatalogEntry[] {
    return this.entries;
  }
}

/** Adds each property initializer of the DTO as the JSON Schema `default`. */
function withDefaults(schema: SchemaObject, instance: object): SchemaObject {
  const properties = { ...(schema.properties ?? {}) } as Record<string, SchemaObject>;
  for (const [key, value] of Object.entries(instance)) {
    if (value !== undefined && properties[key] !== undefined) {
      properties[key] = { ...properties[key], default: value as unknown };
    }
  }
  return { type: 'object', ...schema, properties, additionalProperties: false };
}
