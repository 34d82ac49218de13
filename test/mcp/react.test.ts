/**
 * A ReAct agent, driven by a ScriptedLM, calling a real MCP server's tools (the fixture server over
 * stdio) next to a typelm tool: observations come from the server, an isError result is an error
 * observation the agent reads and the run goes on, and the tools' schemas reach the prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { CalculatorTool, MCPClient, ReAct, Signature } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { resetAfterEach, userText } from "../helpers/scripted.js";
import { FIXTURE } from "../helpers/mcp-servers.js";

const Question = Signature.define({
  name: "Question",
  description: "Answer the question using the tools.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

resetAfterEach();

describe("ReAct with MCP tools", () => {
  let mcp: MCPClient;
  beforeAll(async () => {
    mcp = await MCPClient.connect({ command: process.execPath, args: [FIXTURE, "stdio"] });
  }, 60000);
  afterAll(async () => mcp.close());

  it("calls the server's tools and a local tool, reads an error observation, and answers", async () => {
    const lm = new ScriptedLM([
      { thought: "Ask the warehouse.", action: "refuse", toolInput: {} },
      { thought: "Price it instead.", action: "order", toolInput: { item: "pen", count: 3, price: 2 } },
      { thought: "Double it.", action: "calculator", toolInput: { expression: "6 * 2" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "12" },
    ]);
    const agent = new ReAct(Question, { tools: [...(await mcp.tools()), new CalculatorTool()] });
    const result = await agent.call({ question: "Twice the price of 3 pens at 2?" }, { lm });

    expect(result.answer).toBe("12");
    expect(result.history.map((s) => [s.action, s.observation])).toEqual([
      ["refuse", 'Error: Tool "refuse" failed: the MCP server reported an error: the warehouse is closed'],
      ["order", "3 × pen = 6"],
      ["calculator", 12],
      ["finish", null],
    ]);
    const prompt = userText(lm, 0);
    expect(prompt).toContain("Price an order.");
    expect(prompt).toContain("What to buy");
  }, 60000);
});
