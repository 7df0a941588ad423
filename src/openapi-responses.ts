import { COMPUTE_RESPONSE_SCHEMA } from './compute/dto/compute-response.dto';
import { TASK_CATALOG_ENTRY_SCHEMA, TASK_RESULT_SCHEMA } from './compute/dto/task-result.dto';
import { JOB_ACCEPTED_SCHEMA, JOB_LIST_SCHEMA, JOB_SCHEMA } from './jobs/dto/job.dto';

/** The controllers' answers by the names the OpenAPI document gives them. */
export const RESPONSE_SCHEMAS = {
  TaskResult: TASK_RESULT_SCHEMA,
  TaskCatalogEntry: TASK_CATALOG_ENTRY_SCHEMA,
  ComputeResponse: COMPUTE_RESPONSE_SCHEMA,
  Job: JOB_SCHEMA,
  JobAccepted: JOB_ACCEPTED_SCHEMA,
  JobList: JOB_LIST_SCHEMA,
};
