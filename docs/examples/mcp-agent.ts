import { z } from "zod";
import { CalculatorTool, MCPClient, ReAct, Signature, type LanguageModel } from "typelm";

const Question = Signature.define({
  name: "Question",
  description: "Answer the question using the tools.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

/** Asks a ReAct agent a question, with the tools of the MCP "everything" server next to a calculator. */
export async function askWithMcp(question: string, lm: LanguageModel): Promise<string> {
  // Starts the server from its npm package, over stdio.
  const mcp = await MCPClient.connect({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything", "stdio"], callTimeout: 30 });
  try {
    const agent = new ReAct(Question, { tools: [...(await mcp.tools()), new CalculatorTool()] });
    const { answer } = await agent.call({ question }, { lm });
    return answer;
  } finally {
    await mcp.close(); // ends the server process
  }
}
