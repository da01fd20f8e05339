/**
 * About how many bytes a value holds, for bounding what the inspector keeps unwritten (see InspectorHub.addLater):
 * strings count their length, every other leaf and every key a few bytes, a container a small header. It looks
 * `depth` levels down and at the first `items` entries of each container, counting the rest as the average of
 * those; what lies deeper counts a flat 64 bytes. Cheap rather than exact: it is a bound's estimate, never shown.
 */
export function approxBytes(value: unknown, depth = 4, items = 32): number {
  switch (typeof value) {
    case "string":
      return value.length + 8;
    case "object":
      break;
    default:
      return 8;
  }
  if (value === null) return 8;
  if (depth <= 0) return 64;
  if (Array.isArray(value)) {
    const n = Math.min(value.length, items);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += approxBytes(value[i], depth - 1, items);
    return 16 + (n > 0 ? (sum * value.length) / n : 0);
  }
  let sum = 16;
  let seen = 0;
  for (const key in value) {
    if (++seen > items) return sum + (sum / items) * (Object.keys(value).length - items);
    sum += key.length + 8 + approxBytes((value as Record<string, unknown>)[key], depth - 1, items);
  }
  return sum;
}
