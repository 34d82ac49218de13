// The work behind `MemoryToolset` (lib/tools/memory-toolset.ts): the memory tools' schemas and
// definitions, unbound or bound to one user, and the checks of `toTools`. The bundle loads this module
// the first time the tools are built (scripts/deferred-modules.mjs).
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { TypelmError, ValidationError, preview } from "../errors.js";
import { Memory } from "../memory/memory.js";
import type { MemoryManager } from "../memory/manager.js";
import type { MemoryRecord } from "../memory/record.js";
import { type Tool, tool } from "./tool.js";
import { type ToolsetEntries, type ToolsetEntry, toolEntry } from "./toolset.js";
import type { MemoryToolsetOptions } from "./memory-toolset.js";

/** The tools' argument schemas, built the first time a toolset is made. */
const fields = onFirstUse(() => ({
  text: z.string().min(1).describe("the text to remember"),
  userId: z.string().min(1).describe("the user the memory belongs to"),
  tags: z.array(z.string().min(1)).optional().describe("labels for finding the memory again"),
  id: z.string().min(1).describe("the memory id returned by store_memory"),
  searchTags: z.array(z.string().min(1)).optional().describe("only memories carrying all of these tags"),
  query: z.string().optional().describe("only memories whose text contains this (case-insensitive)"),
  limit: z.number().int().min(1).max(200).optional().describe("at most this many memories, newest first (default 50)"),
}));

/** What a model sees of a record: dates as ISO strings. */
function view(record: MemoryRecord) {
  return { ...record, createdAt: record.createdAt.toISOString(), updatedAt: record.updatedAt.toISOString() };
}

function notFound(memoryId: string): never {
  throw new TypelmError(`no memory with id ${JSON.stringify(memoryId)}`);
}

type ManagerSource = () => MemoryManager;

/** The unbound tool definitions: the model names the user. */
function unboundEntries(manager: ManagerSource) {
  const { text, userId, tags, id, searchTags, query, limit } = fields();
  return {
    store_memory: toolEntry({
      description: "Store a memory for a user. Returns its id.",
      input: { text, userId, tags },
      call: async (a) => ({ id: await manager().storeMemory(a.text, { userId: a.userId, tags: a.tags }) }),
    }),
    retrieve_memory: toolEntry({
      description: "Retrieve one memory by id.",
      input: { id },
      call: async (a) => view((await manager().retrieveMemory(a.id)) ?? notFound(a.id)),
    }),
    search_memories: toolEntry({
      description: "Search a user's memories by tags and text, newest first.",
      input: { userId, tags: searchTags, query, limit },
      call: async (a) => (await manager().searchMemories(a)).map(view),
    }),
  };
}

/** The same tools bound to one user: no userId argument, and other users' records do not exist. */
function boundEntries(manager: ManagerSource, bound: string) {
  const { text, tags, id, searchTags, query, limit } = fields();
  return {
    store_memory: toolEntry({
      description: "Store a memory about the current user. Returns its id.",
      input: { text, tags },
      call: async (a) => ({ id: await manager().storeMemory(a.text, { userId: bound, tags: a.tags }) }),
    }),
    retrieve_memory: toolEntry({
      description: "Retrieve one of the current user's memories by id.",
      input: { id },
      call: async (a) => {
        const record = await manager().retrieveMemory(a.id);
        // Another user's record is reported exactly like a missing one, so ids leak nothing.
        return view(record && record.userId === bound ? record : notFound(a.id));
      },
    }),
    search_memories: toolEntry({
      description: "Search the current user's memories by tags and text, newest first.",
      input: { tags: searchTags, query, limit },
      call: async (a) => (await manager().searchMemories({ ...a, userId: bound })).map(view),
    }),
  };
}

/** `MemoryToolset.tools`: the unbound tools over `Memory.manager`, looked up at call time. */
export function defaultMemoryEntries(): ToolsetEntries {
  return unboundEntries(() => Memory.manager);
}

/** `MemoryToolset.toTools(options)`: the tools, bound to `options.userId` when given. */
export function memoryTools(options: MemoryToolsetOptions): Tool[] {
  const manager: ManagerSource = () => options.manager ?? Memory.manager;
  if (options.userId !== undefined && (typeof options.userId !== "string" || options.userId === "")) {
    throw new ValidationError(`MemoryToolset.toTools userId: expected a non-empty string, received ${preview(options.userId)}`, {
      field: "userId",
    });
  }
  const entries = options.userId === undefined ? unboundEntries(manager) : boundEntries(manager, options.userId);
  return Object.entries(entries).map(([name, entry]) => tool({ name, ...(entry as ToolsetEntry) }));
}
