import type { ChatMessage, DataFormat, SchemaFormat } from "./formats.js";
import type { FewShotExample } from "./few-shot.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { renderBaml } from "../signature/baml.js";
import { renderToonSchema } from "../signature/toon-schema.js";
import { inputsToWire, valueToWire } from "../signature/wire.js";
import { toonFence, toonTemplate } from "./toon-data.js";

/** Options of a `Prompt`: how schemas and data are written, the instruction and the demos. */
export interface PromptOptions {
  /** How the schemas are written in the system message (default JSON Schema). */
  schemaFormat?: SchemaFormat;
  /** How input values and the expected reply are written (default JSON). */
  dataFormat?: DataFormat;
  /** The task instruction; the signature's description by default. */
  instruction?: string;
  demos?: readonly FewShotExample[];
}

/**
 * Enhanced Prompting: a system message (instruction, schemas, examples, reply format) built once
 * and cached, and a user message holding only the input values of one call.
 */
export class Prompt {
  readonly signature: CompiledSignature;
  readonly schemaFormat: SchemaFormat;
  readonly dataFormat: DataFormat;
  readonly instruction: string;
  readonly demos: readonly FewShotExample[];
  private systemText: string | undefined;

  constructor(signature: SignatureClass | CompiledSignature, options: PromptOptions = {}) {
    this.signature = "outputShape" in signature ? signature : compiled(signature);
    this.schemaFormat = options.schemaFormat ?? "json";
    this.dataFormat = options.dataFormat ?? "json";
    this.instruction = options.instruction ?? this.signature.description;
    this.demos = options.demos ?? [];
  }

  /** The same as `new Prompt(signature, options)`. */
  static fromSignature(signature: SignatureClass, options: PromptOptions = {}): Prompt {
    return new Prompt(signature, options);
  }

  /** The system message text (computed on first use, then reused). */
  system(): string {
    this.systemText ??= this.renderSystem();
    return this.systemText;
  }

  /** The user message text for one set of (already validated) input values. */
  user(inputs: Record<string, unknown>): string {
    if (this.signature.inputs.length === 0) return "Produce the output values.";
    return `## Input values\n${this.fence(inputsToWire(this.signature, inputs))}`;
  }

  /** The two chat messages of one call: the system message and the user message for these input values. */
  messages(inputs: Record<string, unknown>): ChatMessage[] {
    return [
      { role: "system", content: this.system() },
      { role: "user", content: this.user(inputs) },
    ];
  }

  private fence(values: Record<string, unknown>): string {
    return this.dataFormat === "toon" ? toonFence(values) : "```json\n" + JSON.stringify(values) + "\n```";
  }

  private renderSchema(shape: Shape, side: "Input" | "Output", jsonSchema: Record<string, unknown>): string {
    switch (this.schemaFormat) {
      case "baml":
        return "```baml\n" + renderBaml(`${this.signature.name}${side}`, shape) + "\n```";
      case "toon":
        return renderToonSchema(shape);
      default: {
        const { $schema: _drop, ...rest } = jsonSchema;
        return "```json\n" + JSON.stringify(rest) + "\n```";
      }
    }
  }

  private renderSystem(): string {
    const sig = this.signature;
    const parts: string[] = [];
    if (this.instruction) parts.push(this.instruction);
    const label = this.schemaFormat === "json" ? " (JSON Schema)" : this.schemaFormat === "baml" ? " (BAML)" : "";
    if (sig.inputs.length > 0) {
      parts.push(`## Input fields${label}\n${this.renderSchema(sig.inputShape, "Input", sig.inputJsonSchema)}`);
    }
    parts.push(`## Output fields${label}\n${this.renderSchema(sig.outputShape, "Output", sig.outputJsonSchema)}`);
    if (this.demos.length > 0) parts.push(this.renderDemos());
    if (this.dataFormat === "toon") {
      parts.push(
        "Reply with the output values in a ```toon fenced block, in this form:\n```toon\n" +
          toonTemplate(sig.outputShape) + "\n```",
      );
    } else {
      parts.push("Reply with one JSON object holding the output fields, in a ```json fenced block.");
    }
    return parts.join("\n\n");
  }

  private renderDemos(): string {
    const sig = this.signature;
    const pick = (values: Record<string, unknown>, shape: Shape) => {
      const out: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(shape)) {
        if (values[name] !== undefined) out[name] = valueToWire(schema, values[name]);
      }
      return out;
    };
    const blocks = this.demos.map((demo, i) => {
      const input = sig.inputs.length > 0 ? `Input:\n${this.fence(pick(demo.input, sig.inputShape))}\n` : "";
      return `### Example ${i + 1}\n${input}Output:\n${this.fence(pick(demo.output, sig.outputShape))}`;
    });
    return `## Examples\n${blocks.join("\n\n")}`;
  }
}
