import type { Client } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';

/**
 * The fixture (fixtures.ts) an MCP tool's argument names, by tool where the same name means
 * another record: a trace tool's dataset is a trace dataset. An id argument without an entry
 * fails the sweeps, as a path parameter without a fixture does.
 */
const ARG_FIXTURES: Record<string, string> = {
  workspace_id: 'workspace_id',
  dataset_id: 'dataset_id',
  version_id: 'version_id',
  run_id: 'run_id',
  base_run_id: 'run_id',
  baseline_run_id: 'ended_run_id',
  candidate_run_id: 'ended_run_id',
  sut_id: 'sut_id',
  connection_id: 'connection_id',
  eval_config_id: 'eval_config_id',
  judge_id: 'judge_id',
  project_id: 'project_id',
  queue_id: 'queue_id',
  item_id: 'item_id',
  trace_id: 'trace_id',
  row_id: 'row_id',
};
const BY_TOOL: Record<string, Record<string, string>> = {
  search_traces: { dataset_id: 'trace_dataset_id', version_id: 'trace_version_id' },
  show_trace: { dataset_id: 'trace_dataset_id', version_id: 'trace_version_id' },
};
/** Arguments ending in _id that name no record of their own, and why. */
const NOT_RECORDS: Record<string, string> = {
  session_id: 'a filter on the traces of the dataset the call names (text within it, not a record)',
};
/** Required arguments that name no record, with a valid value. */
const PLAIN_ARGS: Record<string, unknown> = { values: { correct: true } };

export interface ToolAnswer {
  isError: boolean;
  text: string;
}

/** The arguments naming records in a tool's input schema (optional ones too), with the fixture each takes. */
export function recordArgs(tool: Tool): Array<{ arg: string; fixture: string }> {
  return Object.keys(tool.inputSchema.properties ?? {})
    .filter((arg) => arg.endsWith('_id') && !(arg in NOT_RECORDS))
    .map((arg) => {
      const fixture = BY_TOOL[tool.name]?.[arg] ?? ARG_FIXTURES[arg];
      if (!fixture)
        throw new Error(`MCP tool ${tool.name}: argument ${arg} has no fixture in test/security/mcp-walk.ts`);
      return { arg, fixture };
    });
}

/** A tool's arguments: every record argument from `ids` (a tenant's fixtures), the required others with a valid value. */
export function toolArgs(tool: Tool, ids: Record<string, string>, pick?: (arg: string) => Record<string, string>) {
  const args: Record<string, unknown> = {};
  for (const { arg, fixture } of recordArgs(tool)) args[arg] = (pick ? pick(arg) : ids)[fixture];
  for (const name of tool.inputSchema.required ?? []) if (!(name in args)) args[name] = PLAIN_ARGS[name];
  return args;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  try {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return { isError: result.isError === true, text: JSON.stringify(result) };
  } catch (err) {
    // A protocol error (an argument the schema refuses) refuses as well.
    return { isError: true, text: String(err) };
  }
}
