import { renameSync, unlinkSync } from "node:fs";

/** Moves a finished temp file over `file` (atomic on one file system); on failure the temp file is removed, not left. */
export function renameIntoPlace(temp: string, file: string): void {
  try {
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // already gone
    }
    throw error;
  }
}
