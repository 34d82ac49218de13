/**
 * The worked example of docs/mcp.md: the guide shows docs/examples/mcp-agent.ts verbatim, and the
 * example runs against the "everything" server started from its npm package (npx, offline: the
 * package is installed) with a scripted model.
 */
import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { ScriptedLM } from "typelm/testing";
import { askWithMcp } from "../../docs/examples/mcp-agent.js";

describe("docs/mcp.md's worked example", () => {
  it("is the file the test runs", () => {
    const guide = readFileSync("docs/mcp.md", "utf8");
    expect(guide).toContain("```ts\n" + readFileSync("docs/examples/mcp-agent.ts", "utf8") + "```");
  });

  it("answers through the server's get-sum tool and the calculator", async () => {
    const lm = new ScriptedLM([
      { thought: "Add first.", action: "get-sum", toolInput: { a: 19, b: 23 } },
      { thought: "Double it.", action: "calculator", toolInput: { expression: "42 * 2" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "84" },
    ]);
    expect(await askWithMcp("What is 19 + 23, times 2?", lm)).toBe("84");
    const trajectory = lm.requests[3]!.messages.find((m) => m.role === "user")!.content;
    expect(trajectory).toContain("The sum of 19 and 23 is 42.");
  }, 120000);
});
