import { describe, expect, it } from "@jest/globals";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { Image } from "../../lib/media/media.js";
import { FewShotExample } from "../../lib/prompt/few-shot.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import { t } from "../../lib/signature/temporal.js";
import { ScriptedLM } from "../../lib/testing/scripted-lm.js";
import { SimulatedLM } from "../../lib/testing/simulated-lm.js";

// The test doubles take media inputs: ScriptedLM records the message with its media, and
// SimulatedLM's rules and nearest-demo choice see the Image values themselves.

const render = (width: number): Uint8Array =>
  new Uint8Array(new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="4"><rect width="${width}" height="4" fill="red"/></svg>`).render().asPng());
const small = render(4);
const wide = render(9);

class Measure extends Signature {
  static override description = "Say how many bytes the picture has.";
  static override input = { photo: t.image(), note: z.string() };
  static override output = { answer: z.string() };
}

describe("test doubles with media inputs", () => {
  it("ScriptedLM records the user message with the image attached and named in the text", async () => {
    const lm = new ScriptedLM([{ answer: "ok" }]);
    const photo = Image.fromBytes(small);
    await new Predict(Measure).call({ photo, note: "n" }, { lm });
    const user = lm.requests[0]!.messages.at(-1)!;
    expect(user.media).toEqual([{ name: "photo", value: photo }]);
    expect(user.content).toContain('"photo":"[image 1 below]"');
  });

  it("SimulatedLM's rule receives the Image itself in place of its placeholder", async () => {
    const lm = new SimulatedLM({ rules: [{ phrase: "how many bytes", answer: (inputs) => ({ answer: String((inputs["photo"] as Image).size) }) }] });
    const out = await new Predict(Measure).call({ photo: Image.fromBytes(wide), note: "n" }, { lm });
    expect(out.answer).toBe(String(wide.length));
    expect(lm.requests[0]!.read.inputs["note"]).toBe("n");
  });

  it("SimulatedLM reads demos sent as turns and copies the nearest one (same image bytes)", async () => {
    const lm = new SimulatedLM({});
    const predict = new Predict(Measure);
    predict.demos = [
      new FewShotExample({ input: { photo: Image.fromBytes(small), note: "a" }, output: { answer: "small" } }),
      new FewShotExample({ input: { photo: Image.fromBytes(wide), note: "a" }, output: { answer: "wide" } }),
    ];
    const out = await predict.call({ photo: Image.fromBytes(wide), note: "a" }, { lm });
    expect(lm.requests[0]!.read.demos.map((d) => d.output)).toEqual([{ answer: "small" }, { answer: "wide" }]);
    expect(out.answer).toBe("wide");
  });
});
