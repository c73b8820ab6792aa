import { describe, expect, it } from 'vitest';
import { create, createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { ServerReflectionRequestSchema, type ServerReflectionRequest } from '../../src/types/gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection } from '../../src/rpc/reflection.js';
import { ConfigService, P2PService, StoreService } from '../../src/types/index.js';

const reflection = new ServerReflection([StoreService, ConfigService, P2PService]);
const ask = (messageRequest: ServerReflectionRequest['messageRequest']) =>
  reflection.answer(create(ServerReflectionRequestSchema, { host: 'h', messageRequest }));

/** The descriptors of a file_descriptor_response, by file name. */
function files(answer: ReturnType<typeof ask>) {
  expect(answer.messageResponse?.case).toBe('fileDescriptorResponse');
  const protos = (answer.messageResponse!.value as { fileDescriptorProto: Uint8Array[] }).fileDescriptorProto.map((b) =>
    fromBinary(FileDescriptorProtoSchema, b),
  );
  return new Map(protos.map((p) => [p.name, p]));
}

/**
 * A file and its imports from `files`, each after what it imports: the order a
 * FileDescriptorSet needs. (createFileRegistry's resolver form adds the imports
 * of one file in reverse import order, which fails when a later import imports
 * an earlier one, as ev-node's state_rpc.proto does with evnode.proto and state.proto.)
 */
function dependenciesFirst(file: FileDescriptorProto, files: Map<string, FileDescriptorProto>): FileDescriptorProto[] {
  const ordered = new Map<string, FileDescriptorProto>();
  const visit = (f: FileDescriptorProto) => {
    if (ordered.has(f.name)) return;
    for (const dep of f.dependency) visit(files.get(dep)!);
    ordered.set(f.name, f);
  };
  visit(file);
  return [...ordered.values()];
}

// Behaviour after grpc-go's reflection/internal/internal.go (the server buf curl and grpcurl are written against).
describe('gRPC server reflection', () => {
  it('lists every service served, the reflection services included', () => {
    const a = ask({ case: 'listServices', value: '' });
    expect(a.validHost).toBe('h');
    expect(a.messageResponse?.case).toBe('listServicesResponse');
    const names = (a.messageResponse!.value as { service: Array<{ name: string }> }).service.map((s) => s.name);
    expect(names.sort()).toEqual(
      [
        'grpc.reflection.v1.ServerReflection',
        'grpc.reflection.v1alpha.ServerReflection',
        'node.v1.ConfigService',
        'node.v1.P2PService',
        'node.v1.StoreService',
      ].sort(),
    );
  });

  it('answers a service, a method, a message and a field with its file and every import, enough to build a registry', () => {
    for (const symbol of ['node.v1.StoreService', 'node.v1.StoreService.GetBlock', 'node.v1.GetBlockResponse', 'node.v1.GetBlockRequest.height']) {
      const got = files(ask({ case: 'fileContainingSymbol', value: symbol }));
      // The asked file comes first, as grpc-go sends it; its imports follow.
      const [first] = got.values();
      const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: dependenciesFirst(first!, got) }));
      expect(
        registry.getService('node.v1.StoreService')?.methods.map((m) => m.name),
        symbol,
      ).toContain('GetBlock');
      expect(registry.getMessage('google.protobuf.Empty'), symbol).toBeDefined();
    }
  });

  it('answers a file by name, and an unknown file or symbol with NOT_FOUND', () => {
    const got = files(ask({ case: 'fileByFilename', value: 'google/protobuf/empty.proto' }));
    expect([...got.keys()]).toEqual(['google/protobuf/empty.proto']);
    for (const a of [ask({ case: 'fileByFilename', value: 'nope.proto' }), ask({ case: 'fileContainingSymbol', value: 'node.v1.Nope' })]) {
      expect(a.messageResponse?.case).toBe('errorResponse');
      expect((a.messageResponse!.value as { errorCode: number }).errorCode).toBe(5);
    }
  });
});
