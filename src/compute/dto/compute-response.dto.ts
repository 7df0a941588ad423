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
