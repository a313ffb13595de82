import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { promises as fsp } from "node:fs";
import { HermesError, type ErrorCode } from "./errors.js";

/**
 * Byte limits of the files every command reads. Far above anything real (the largest shipped
 * manifest is a few KiB), far below what makes YAML parsing cost seconds and gigabytes.
 */
export const SIZE_LIMITS = {
  manifest: 256 * 1024,
  config: 1024 * 1024,
  spec: 1024 * 1024,
} as const;

export function formatBytes(n: number): string {
  return n >= 1024 * 1024
    ? `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`
    : n >= 1024
      ? `${Math.round(n / 1024)} KiB`
      : `${n} bytes`;
}

function tooLarge(file: string, size: number, limit: number, code: ErrorCode): HermesError {
  return new HermesError(code, {
    message: `${file} is ${formatBytes(size)}, over the ${formatBytes(limit)} limit`,
    file,
  });
}

/** Read a text file whose size is checked first (on the open descriptor, so a swap in between cannot slip past). */
export function readTextCappedSync(file: string, limit: number, code: ErrorCode): string {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > limit) throw tooLarge(file, size, limit, code);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** As readTextCappedSync; `undefined` when the file does not exist, E_FS_READ when it cannot be read. */
export async function readTextCappedIfExists(
  file: string,
  limit: number,
  code: ErrorCode,
): Promise<string | undefined> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(file, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new HermesError("E_FS_READ", { message: `could not read ${file}: ${(e as Error).message}`, file, cause: e });
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new HermesError("E_FS_READ", { message: `${file} is a folder, not a file`, file });
    if (st.size > limit) throw tooLarge(file, st.size, limit, code);
    return await fh.readFile("utf8");
  } catch (e) {
    if (e instanceof HermesError) throw e;
    throw new HermesError("E_FS_READ", { message: `could not read ${file}: ${(e as Error).message}`, file, cause: e });
  } finally {
    await fh.close();
  }
}
