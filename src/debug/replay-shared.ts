import type { BlobStore } from "../record/blobs.js";
import type { RecordedOptions, RecordedRun } from "./recording.js";
import type { ReplayRecorder } from "./replay-recorder.js";
import type { ReplayStops } from "./replay-stop.js";

/** What the stand-ins of one replayed run share: the recording, the lines replayed so far, its stops and its notes. */
export interface ReplayShared {
  readonly recording: RecordedRun;
  readonly options: RecordedOptions;
  readonly recorder: ReplayRecorder;
  readonly stops: ReplayStops;
  /** Things the stand-ins noticed (a call the recording never made, a crash): context for a divergence. */
  readonly notes: string[];
  /** Where the recording's images and files are read back from. */
  readonly blobs: BlobStore;
}
