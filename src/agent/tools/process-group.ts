// The runner lives in core so the runtime's shell hooks share it with the voice tools.
export { runArgvInGroup, type GroupRunOptions, type GroupRunResult } from "../../core/process-group.js";
