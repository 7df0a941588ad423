import type { SchemaObject } from '@nestjs/swagger';

/** The tutorial's response shape for `POST /api/compute`. */
export interface ComputeResponseDto {
  success: true;
  message: string;
  metrics: {
    status: 'success';
    executionTimeMs: number;
    data: {
      computedValue: number;
      processedPayloadLength: number;
      /** Worker thread id (0 when `POOL_THREADS=0` runs it on the event loop). */
      workerId: number;
    };
  };
}

/** `ComputeResponseDto` in the OpenAPI document. */
export const COMPUTE_RESPONSE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['success', 'message', 'metrics'],
  properties: {
    success: { type: 'boolean', enum: [true] },
    message: { type: 'string' },
    metrics: {
      type: 'object',
      required: ['status', 'executionTimeMs', 'data'],
      properties: {
        status: { type: 'string', enum: ['success'] },
        executionTimeMs: { type: 'number' },
        data: {
          type: 'object',
          required: ['computedValue', 'processedPayloadLength', 'workerId'],
          properties: {
            computedValue: { type: 'number' },
            processedPayloadLength: { type: 'integer' },
            workerId: {
              type: 'integer',
              description: 'Worker thread id (0 when `POOL_THREADS=0` runs it on the event loop).',
            },
          },
        },
      },
    },
  },
};
