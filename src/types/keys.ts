import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { publicKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPublicKey } from '@libp2p/peer-id';
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

/**
 * Header of libp2p's protobuf PublicKey {Type: Ed25519 (1), Data: 32 bytes}:
 * field 1 varint 1, field 2 length 32. What go-libp2p's crypto.MarshalPublicKey
 * and @libp2p/crypto's publicKeyToProtobuf write for an ed25519 key.
 */
const LIBP2P_ED25519_PUBLIC_KEY_PREFIX = new Uint8Array([0x08, 0x01, 0x12, 0x20]);

/**
 * An ed25519 public key as libp2p marshals it: the form of `Signer.pub_key`
 * (ev-node types/signer.go, MarshalledPubKey) and of a peer id's identity multihash.
 */
export function marshalEd25519PublicKey(publicKey: Uint8Array): Uint8Array {
  const out = new Uint8Array(LIBP2P_ED25519_PUBLIC_KEY_PREFIX.length + publicKey.length);
  out.set(LIBP2P_ED25519_PUBLIC_KEY_PREFIX);
  out.set(publicKey, LIBP2P_ED25519_PUBLIC_KEY_PREFIX.length);
  return out;
}

/**
 * The raw ed25519 key of a libp2p-marshalled public key (ev-node reads
 * `Signer.pub_key` with crypto.UnmarshalPublicKey). Throws for another key
 * type: this node verifies ed25519 signatures only.
 */
export function unmarshalEd25519PublicKey(marshalled: Uint8Array): Uint8Array {
  let type: number | undefined;
  let data: Uint8Array | undefined;
  try {
    const reader = new BinaryReader(marshalled);
    while (reader.pos < reader.len) {
      const [no, wireType] = reader.tag();
      if (no === 1 && wireType === WireType.Varint) type = reader.int32();
      else if (no === 2 && wireType === WireType.LengthDelimited) data = reader.bytes();
      else reader.skip(wireType, no);
    }
  } catch (err) {
    throw new Error(`signer public key is not a libp2p public key: ${(err as Error).message}`);
  }
  if (type === undefined || data === undefined) throw new Error('signer public key is not a libp2p public key (type or data missing)');
  if (type !== 1) throw new Error(`signer public key is of libp2p key type ${type}; only ed25519 (1) is supported`);
  if (data.length !== 32) throw new Error(`signer ed25519 public key is ${data.length} bytes, expected 32`);
  return data;
}

/** An ed25519 key pair held as raw 32-byte seed and public key. */
export class Ed25519Key {
  readonly publicKey: Uint8Array;
  /** The public key as libp2p marshals it: what `Signer.pub_key` holds. */
  readonly marshalledPublicKey: Uint8Array;
  /** sha256(raw public key): the proposer address of DESIGN.md §6 (ev-node types/signer.go, NewSigner). */
  readonly address: Uint8Array;
  private readonly privateKeyObject: KeyObject;

  private constructor(readonly seed: Uint8Array) {
    this.privateKeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(this.privateKeyObject).export({ format: 'der', type: 'spki' });
    this.publicKey = new Uint8Array(spki.subarray(SPKI_ED25519_PREFIX.length));
    this.marshalledPublicKey = marshalEd25519PublicKey(this.publicKey);
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

  /** sign() on libuv's thread pool (node's crypto.sign with a callback): the calling thread goes on meanwhile. */
  signAsync(message: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) =>
      sign(null, message, this.privateKeyObject, (err, signature) => (err ? reject(err) : resolve(new Uint8Array(signature)))),
    );
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

/**
 * The libp2p peer id of an ed25519 public key: an identity multihash of the
 * protobuf PublicKey {Type: Ed25519, Data: key}, base58btc — the `12D3KooW…`
 * form that peers put after `/p2p/` in their addresses.
 */
export function libp2pPeerId(publicKey: Uint8Array): string {
  return peerIdFromPublicKey(publicKeyFromRaw(publicKey)).toString();
}

/** CometBFT's node id: hex of the first 20 bytes of sha256(public key). */
export function cometNodeId(publicKey: Uint8Array): string {
  return Buffer.from(sha256(publicKey).subarray(0, 20)).toString('hex');
}
