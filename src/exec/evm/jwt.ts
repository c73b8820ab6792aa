import { readFileSync } from 'node:fs';

/** jwt.hex is unusable: missing, unreadable, or not 32 bytes of hex. The message names the file. */
export class JwtSecretError extends Error {
  readonly code = 'JWT_SECRET_INVALID';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

/** The 32-byte secret in a jwt.hex file: 64 hex digits, an optional 0x, surrounding whitespace ignored. */
export function readJwtSecret(file: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new JwtSecretError(code === 'ENOENT' ? `JWT secret file ${file} is missing` : `JWT secret file ${file} cannot be read (${code})`, file);
  }
  const hex = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    const what = /^[0-9a-fA-F]*$/.test(hex) ? `${hex.length} hex digits` : 'characters that are not hex';
    throw new JwtSecretError(`JWT secret file ${file} must hold 32 bytes as 64 hex digits; it has ${what}`, file);
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/**
 * A fresh HS256 token for the Engine API: `iat` now, as execution clients
 * require (within ±60 s). jose is imported on the first call: a node that
 * reads jwt.hex only to keep it out of its log lines never signs with it.
 */
export async function engineJwt(secret: Uint8Array, now = new Date()): Promise<string> {
  const { SignJWT } = await import('jose');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .sign(secret);
}
