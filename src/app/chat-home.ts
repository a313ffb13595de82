import { homePaths } from "../core/paths.js";
import { runChat, type ChatOptions } from "./chat.js";
import { recoverPluginsDir } from "./recover.js";

/** `hermes chat` on a home: an install a killed process left half-placed is rolled back before the agent starts. */
export async function chatInHome(o: ChatOptions & { warn: (line: string) => void }): Promise<number> {
  const { warn, ...chat } = o;
  await recoverPluginsDir(homePaths(o.home), warn);
  return runChat(chat);
}
