import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, createHash, type KeyObject } from 'node:crypto';

// DER prefixes that wrap a raw 32-byte ed25519 seed / public key, so node:crypto
// (which only takes PKCS#8 / SPKI) can use the raw forms stored in the key files.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest().buffer.slice(0));
}

/** An ed25519 key pair held as raw 32-byte seed and public key. */
export class Ed25519Key {
  readonly publicKey: Uint8Array;
  /** sha256(public key): the proposer address of DESIGN.md §6. */
  readonly address: Uint8Array;
  private readonly privateKeyObject: KeyObject;

  private constructor(readonly seed: Uint8Array) {
    this.privateKeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(this.privateKeyObject).export({ format: 'der', type: 'spki' });
    this.publicKey = new Uint8Array(spki.subarray(SPKI_ED25519_PREFIX.length));
    this.address = sha256(this.publicKey);
  }

  static generate(): Ed25519Key {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
    return new Ed25519Key(new Uint8Array(pkcs8.subarray(PKCS8_ED25519_PREFIX.length)));
  }

  static fromSeed(seed: Uint8Array): Ed25519Key {
    if (seed.length !== 32) throw new Error(`an ed25519 private key is 32 bytes, got ${seed.length}`);
    return new Ed25519Key(seed);
  }

  sign(message: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, message, this.privateKeyObject));
  }
}

/**
 * Public key objects of the keys verified lately, by the key's hex: a chain has one
 * proposer, so building the object once instead of once a block saves most of a
 * verification's cost. Bounded; the oldest entry goes first.
 */
const publicKeyObjects = new Map<string, KeyObject>();
const PUBLIC_KEY_CACHE_SIZE = 16;

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const hex = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('hex');
  let key = publicKeyObjects.get(hex);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: 'der', type: 'spki' });
    if (publicKeyObjects.size >= PUBLIC_KEY_CACHE_SIZE) publicKeyObjects.delete(publicKeyObjects.keys().next().value!);
    publicKeyObjects.set(hex, key);
  }
  return key;
}

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  return verify(null, message, publicKeyObject(publicKey), signature);
}

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58btc(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = BASE58_ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/**
 * The libp2p peer id of an ed25519 public key: an identity multihash of the
 * protobuf PublicKey {Type: Ed25519, Data: key}, base58btc — the `12D3KooW…`
 * form that peers put after `/p2p/` in their addresses.
 */
export function libp2pPeerId(publicKey: Uint8Array): string {
  const protobufKey = Buffer.concat([Buffer.from([0x08, 0x01, 0x12, 0x20]), publicKey]);
  return base58btc(Buffer.concat([Buffer.from([0x00, protobufKey.length]), protobufKey]));
}

/** CometBFT's node id: hex of the first 20 bytes of sha256(public key). */
export function cometNodeId(publicKey: Uint8Array): string {
  return Buffer.from(sha256(publicKey).subarray(0, 20)).toString('hex');
}
