import type { ChatMessage, DataFormat, SchemaFormat } from "./formats.js";
import type { FewShotExample } from "./few-shot.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { renderBaml } from "../signature/baml.js";
import { renderToonSchema } from "../signature/toon-schema.js";
import { inputsToWire, valueToWire } from "../signature/wire.js";
import { toonFence, toonTemplate } from "./toon-data.js";
import { extractMedia, holdsMedia, mediaNote } from "./media-parts.js";

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
  /** Demos holding media are sent as earlier user/assistant turns (with their media), built once. */
  private demoTurnsCache: ChatMessage[] | undefined;
  private mediaDemos: boolean | undefined;

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

  /** The user message text for one set of (already validated) input values; a media value is named by a placeholder. */
  user(inputs: Record<string, unknown>): string {
    return this.userMessage(inputs).content;
  }

  /**
   * The chat messages of one call: the system message, the demos as earlier turns when they hold
   * media, and the user message for these input values (with its media attached).
   */
  messages(inputs: Record<string, unknown>): ChatMessage[] {
    return [{ role: "system", content: this.system() }, ...this.demoTurns(), this.userMessage(inputs)];
  }

  /** Whether the demos are sent as turns: some demo input holds a media value, which system text cannot carry. */
  private demosAsTurns(): boolean {
    return (this.mediaDemos ??= this.demos.some((demo) => holdsMedia(demo.input)));
  }

  private demoTurns(): ChatMessage[] {
    if (!this.demosAsTurns()) return [];
    this.demoTurnsCache ??= this.demos.flatMap((demo): ChatMessage[] => [
      this.userMessage(demo.input),
      { role: "assistant", content: this.fence(this.pick(demo.output, this.signature.outputShape)) },
    ]);
    return this.demoTurnsCache;
  }

  private userMessage(inputs: Record<string, unknown>): ChatMessage {
    if (this.signature.inputs.length === 0) return { role: "user", content: "Produce the output values." };
    const declared: Record<string, unknown> = {};
    for (const field of this.signature.inputs) if (inputs[field.name] !== undefined) declared[field.name] = inputs[field.name];
    const { values, media } = extractMedia(declared);
    const text = `## Input values\n${this.fence(inputsToWire(this.signature, values))}`;
    return media.length === 0 ? { role: "user", content: text } : { role: "user", content: `${text}\n${mediaNote(media)}`, media };
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
    if (this.demos.length > 0) parts.push(this.demosAsTurns() ? "## Examples\nThe examples are the earlier turns of this conversation." : this.renderDemos());
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

  private pick(values: Record<string, unknown>, shape: Shape): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(shape)) {
      if (values[name] !== undefined) out[name] = valueToWire(schema, values[name]);
    }
    return out;
  }

  private renderDemos(): string {
    const sig = this.signature;
    const blocks = this.demos.map((demo, i) => {
      const input = sig.inputs.length > 0 ? `Input:\n${this.fence(this.pick(demo.input, sig.inputShape))}\n` : "";
      return `### Example ${i + 1}\n${input}Output:\n${this.fence(this.pick(demo.output, sig.outputShape))}`;
    });
    return `## Examples\n${blocks.join("\n\n")}`;
  }
}
