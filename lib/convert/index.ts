// Contract of the conversion layer (implemented in this folder):
//   validateInputs(compiled, inputs)  -> values after defaults, dates converted; ValidationError naming the field
//   inputsToWire(compiled, values)    -> JSON-ready values (Temporal/Date -> ISO strings)
//   convertOutputs(compiled, value, raw) -> typed outputs; OutputError { raw, path, expected, received }
export { validateInputs, inputsToWire, valueToWire } from "./input.js";
export { convertOutputs, convertValue } from "./output.js";
