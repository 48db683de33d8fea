/**
 * The deterministic names everything is found again by, after a crash or on delete: CAPO's, so a
 * server CAPO created is adopted as it is.
 */

/** `<server>-<nameSuffix>`, else `<server>-<index>` (CAPO's getPortName). */
export function portName(server: string, index: number, nameSuffix: string | undefined): string {
  return `${server}-${nameSuffix ?? String(index)}`;
}

/** The root volume: `<server>-root`. */
export function rootVolumeName(server: string): string {
  return `${server}-root`;
}

/** An additional block device's volume: `<server>-<name>`. */
export function blockDeviceVolumeName(server: string, device: string): string {
  return `${server}-${device}`;
}

/**
 * Nova filters servers by name with a regular expression searched anywhere in the name: this one
 * matches `name` exactly. Callers still compare names, as a cloud's regex dialect may differ.
 */
export function exactNameRegex(name: string): string {
  return `^${name.replace(/[\\^$.*+?()[\]{}|-]/g, '\\$&')}$`;
}
