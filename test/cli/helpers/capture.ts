import { PassThrough, Writable } from "node:stream";

/** A writable that keeps everything written to it, optionally posing as a terminal. */
export class Capture extends Writable {
  text = "";
  isTTY: boolean;
  columns = 100;
  constructor(isTTY = false) {
    super();
    this.isTTY = isTTY;
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    callback();
  }
}

/** An input stream posing as a terminal: records raw-mode switches; keys are pushed with `press`. */
export class FakeTerminalInput extends PassThrough {
  isTTY = true;
  rawModes: boolean[] = [];
  setRawMode(mode: boolean): this {
    this.rawModes.push(mode);
    return this;
  }
  press(keys: string): void {
    this.write(keys);
  }
}
