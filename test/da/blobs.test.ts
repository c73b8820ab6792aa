/**
 * DA blobs in ev-node's formats (evstack/ev-node 74eccbace): what noded posts
 * decodes with ev-node's own schemas (test/fixtures/evnode-proto) and carries
 * the signatures ev-node's retriever checks; noded's retriever takes and skips
 * what ev-node's does (block/internal/syncing/da_retriever.go and its
 * da_retriever_strict_test.go).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPublicKey, verify } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { DaCache, DaRetriever, blobCommitment, blockBlobs, type Blob, type BlobApi, type BlockSink } from '../../src/da/index.js';
import { silentLogger } from '../../src/log/index.js';
import { Ed25519Key, SignedHeaderSchema, buildBlock, headerHash, txsHash, type Block } from '../../src/types/index.js';
import {
  DAHeaderEnvelopeSchema,
  DataSchema as EvDataSchema,
  SignedDataSchema as EvSignedDataSchema,
  SignedHeaderSchema as EvSignedHeaderSchema,
} from '../fixtures/evnode-proto/gen/evnode/v1/evnode_pb.js';
import { fromBinary } from '@bufbuild/protobuf';
import { systemClock } from '../../src/util/index.js';
import { tempHome, waitFor } from '../helpers/daemon.js';

const ns = { header: new Uint8Array(29).fill(1), data: new Uint8Array(29).fill(2) };
const proposer = Ed25519Key.fromSeed(new Uint8Array(32).fill(3));
const enc = new TextEncoder();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function chain(count: number, txsAt: (height: number) => string[] = () => ['a=1']): Block[] {
  const blocks: Block[] = [];
  let last: Uint8Array = new Uint8Array(0);
  for (let h = 1; h <= count; h++) {
    const block = buildBlock({
      chainId: 'blobs',
      height: BigInt(h),
      time: BigInt(Date.now()) * 1_000_000n + BigInt(h),
      txs: txsAt(h).map((t) => enc.encode(t)),
      lastHeaderHash: last,
      lastDataHash: new Uint8Array(0),
      appHash: new Uint8Array(32),
      signer: proposer,
    });
    last = headerHash(block.header!.header!);
    blocks.push(block);
  }
  return blocks;
}

const ed25519Verify = (marshalledKey: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
  verify(
    null,
    message,
    createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), marshalledKey.subarray(4)]), format: 'der', type: 'spki' }),
    signature,
  );

describe("blobs as ev-node's submitter posts them", () => {
  it('posts a DAHeaderEnvelope signed over the SignedHeader, and a SignedData signed over the Data', () => {
    const [block] = chain(1);
    const [headerBlob, dataBlob] = blockBlobs(block!, ns, proposer);
    expect(headerBlob!.namespace).toEqual(ns.header);
    expect(dataBlob!.namespace).toEqual(ns.data);

    const envelope = fromBinary(DAHeaderEnvelopeSchema, headerBlob!.data);
    expect(envelope.header!.height).toBe(1n);
    expect(envelope.signer!.pubKey).toEqual(proposer.marshalledPublicKey);
    // da_submitter.go signAndCacheEnvelope: envelope_signature over SignedHeader.MarshalBinary (fields 1-3).
    const signedHeader = toBinary(EvSignedHeaderSchema, { ...envelope, $typeName: 'node.v1.SignedHeader' } as never);
    expect(ed25519Verify(envelope.signer!.pubKey, signedHeader, envelope.envelopeSignature)).toBe(true);
    expect(signedHeader).toEqual(toBinary(SignedHeaderSchema, block!.header!));

    // da_submitter.go signData: signature over Data.MarshalBinary (metadata included).
    const signedData = fromBinary(EvSignedDataSchema, dataBlob!.data);
    expect(signedData.data!.txs).toEqual(block!.data!.txs);
    expect(signedData.signer!.address).toEqual(proposer.address);
    expect(ed25519Verify(signedData.signer!.pubKey, toBinary(EvDataSchema, signedData.data!), signedData.signature)).toBe(true);

    // Laid out by hand around the signatures (BlobLayout): byte for byte what ev-node's protobuf marshalling writes, commitments over those bytes.
    expect(headerBlob!.data).toEqual(toBinary(DAHeaderEnvelopeSchema, envelope));
    expect(dataBlob!.data).toEqual(toBinary(EvSignedDataSchema, signedData));
    expect(headerBlob!.commitment).toEqual(blobCommitment(ns.header, headerBlob!.data));
    expect(dataBlob!.commitment).toEqual(blobCommitment(ns.data, dataBlob!.data));
  });

  it('posts no data blob for a block without txs (cache/manager.go GetPendingData skips them)', () => {
    const [block] = chain(1, () => []);
    expect(block!.header!.header!.dataHash).toEqual(txsHash([]));
    expect(blockBlobs(block!, ns, proposer).map((b) => b.namespace)).toEqual([ns.header]);
  });
});

/** A DaRetriever over blobs given per DA height (from 1); returns the blocks it applied, with the DA heights of header and data. */
async function retrieve(blobsAt: Blob[][]): Promise<{ applied: Block[]; lastDataHashes: Uint8Array[]; daHeights: Array<[bigint, bigint]> }> {
  const home = tempHome();
  cleanups.push(home.cleanup);
  const applied: Block[] = [];
  const lastDataHashes: Uint8Array[] = [];
  const daHeights: Array<[bigint, bigint]> = [];
  const sink: BlockSink = {
    get nextHeight() {
      return BigInt(applied.length + 1);
    },
    lastDataHash: new Uint8Array(32).fill(9),
    apply: async (block, da) => {
      applied.push(block);
      daHeights.push([da.header, da.data]);
      lastDataHashes.push(block.data!.metadata!.lastDataHash);
    },
  };
  const client = {
    networkHead: async () => BigInt(blobsAt.length),
    getAll: async (height: bigint) => blobsAt[Number(height) - 1] ?? [],
  } as unknown as BlobApi;
  const retriever = new DaRetriever(
    client,
    new DaCache(home.dir, silentLogger()),
    ns,
    sink,
    {
      chainId: 'blobs',
      proposerAddress: proposer.address,
      startDaHeight: 1n,
      lastAppliedDaHeight: 0n,
      pollMs: 10,
      retryMaxMs: 100,
    },
    silentLogger(),
    systemClock,
  );
  const abort = new AbortController();
  retriever.start(abort.signal, (err) => {
    throw err;
  });
  await waitFor(() => retriever.scannedHeight() >= BigInt(blobsAt.length), 'the retriever to read every DA height');
  abort.abort();
  await retriever.stopped();
  return { applied, lastDataHashes, daHeights };
}

/** A header blob as ev-node posted before envelopes: a plain SignedHeader. */
const legacyHeaderBlob = (block: Block): Blob => ({ namespace: ns.header, data: toBinary(SignedHeaderSchema, block.header!), commitment: new Uint8Array(32) });

describe("noded's retriever reads what ev-node's reads", () => {
  it('takes plain headers until the first valid envelope, then only envelopes (TestDARetriever_StrictEnvelopeMode_Switch)', async () => {
    const blocks = chain(4, () => []);
    const { applied, daHeights } = await retrieve([
      [legacyHeaderBlob(blocks[0]!)], // legacy, before strict mode: taken
      blockBlobs(blocks[1]!, ns, proposer), // envelope: taken, strict mode on
      [legacyHeaderBlob(blocks[2]!)], // legacy after: skipped
      blockBlobs(blocks[2]!, ns, proposer), // the same block as an envelope: taken
      blockBlobs(blocks[3]!, ns, proposer),
    ]);
    expect(applied.map((b) => b.header!.header!.height)).toEqual([1n, 2n, 3n, 4n]);
    expect(daHeights.map(([header]) => header)).toEqual([1n, 2n, 4n, 5n]);
  });

  it("rebuilds the data of a block without txs from its header, with the chain's last data hash (syncer.go)", async () => {
    const blocks = chain(1, () => []);
    const { applied, lastDataHashes } = await retrieve([blockBlobs(blocks[0]!, ns, proposer)]);
    expect(applied[0]!.data!.txs).toEqual([]);
    expect(applied[0]!.data!.metadata!.time).toBe(blocks[0]!.header!.header!.time);
    expect(lastDataHashes[0]).toEqual(new Uint8Array(32).fill(9));
  });

  it('skips a bad envelope signature, another proposer, unsigned or badly signed data', async () => {
    const blocks = chain(3);
    const intruder = Ed25519Key.generate();
    const [header1, data1] = blockBlobs(blocks[0]!, ns, proposer);
    const badEnvelope = { ...header1!, data: Uint8Array.from(header1!.data) };
    badEnvelope.data[badEnvelope.data.length - 1]! ^= 1;
    const other = chain(1)[0]!;
    other.header!.header!.proposerAddress = intruder.address;
    const [header2, data2] = blockBlobs(blocks[1]!, ns, proposer);
    const unsignedData = {
      ...data2!,
      data: toBinary(EvSignedDataSchema, create(EvSignedDataSchema, { data: fromBinary(EvSignedDataSchema, data2!.data).data })),
    };
    const [header3, data3] = blockBlobs(blocks[2]!, ns, proposer);
    const badlySigned = fromBinary(EvSignedDataSchema, data3!.data);
    badlySigned.signature = intruder.sign(toBinary(EvDataSchema, badlySigned.data!));
    const { applied, daHeights } = await retrieve([
      [badEnvelope, data1!],
      [...blockBlobs(other, ns, intruder)],
      [header1!, data1!],
      [header2!, unsignedData],
      [header3!, { ...data3!, data: toBinary(EvSignedDataSchema, badlySigned) }],
      [data2!, data3!],
    ]);
    // Block 1 from its good envelope only (DA height 3); blocks 2 and 3 once their properly signed data came (DA height 6).
    expect(applied.map((b) => b.header!.header!.height)).toEqual([1n, 2n, 3n]);
    expect(applied.every((b) => Buffer.compare(b.header!.header!.proposerAddress, proposer.address) === 0)).toBe(true);
    expect(daHeights).toEqual([
      [3n, 3n],
      [4n, 6n],
      [5n, 6n],
    ]);
  });
});
