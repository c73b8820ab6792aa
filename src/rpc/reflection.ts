import { create, createRegistry, toBinary, type DescFile, type DescService, type Registry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import * as v1 from '../types/gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../types/gen/grpc/reflection/v1alpha/reflection_pb.js';

/** gRPC status NOT_FOUND, the code grpc-go's reflection server answers unknown files and symbols with. */
const NOT_FOUND = 5;
/** gRPC status UNIMPLEMENTED, for extension queries: no file served here declares extensions. */
const UNIMPLEMENTED = 12;

type Request = v1.ServerReflectionRequest;
type Response = v1.ServerReflectionResponse;

/**
 * Answers gRPC server reflection (grpc/reflection/v1 and v1alpha) for the
 * services this listener serves, so `buf curl` and `grpcurl` work without
 * `--schema`/proto files.
 *
 * Behaviour after grpc-go's reflection/internal/internal.go: a file is sent
 * with all its transitive dependencies (clients resolve imports from the same
 * answer), an unknown file or symbol is an error_response with NOT_FOUND, and
 * a symbol may name a service, a method, a message, an enum or a field.
 */
export class ServerReflection {
  private readonly registry: Registry;
  /** Every file the services need, dependencies included, by file name (`node/v1/store.proto`). */
  private readonly files = new Map<string, DescFile>();
  private readonly serviceNames: string[];
  private readonly encoded = new Map<string, Uint8Array>();

  constructor(services: DescService[]) {
    const all = [...services, v1.ServerReflection, v1alpha.ServerReflection];
    this.serviceNames = all.map((s) => s.typeName);
    for (const s of all) for (const f of withDependencies(s.file)) this.files.set(f.proto.name, f);
    this.registry = createRegistry(...this.files.values());
  }

  /** Registers both versions of the reflection service on a Connect router. */
  register(router: ConnectRouter): void {
    router.service(v1.ServerReflection, this.impl(v1.ServerReflectionResponseSchema));
    // v1alpha's messages have the same fields and numbers as v1's; only the package differs.
    router.service(v1alpha.ServerReflection, this.impl(v1alpha.ServerReflectionResponseSchema) as unknown as ServiceImpl<typeof v1alpha.ServerReflection>);
  }

  private impl(schema: typeof v1.ServerReflectionResponseSchema | typeof v1alpha.ServerReflectionResponseSchema): ServiceImpl<typeof v1.ServerReflection> {
    const answer = (req: Request) => create(schema as typeof v1.ServerReflectionResponseSchema, this.answer(req) as never);
    return {
      async *serverReflectionInfo(requests) {
        for await (const req of requests) yield answer(req);
      },
    };
  }

  /** The response to one request of the stream. */
  answer(req: Request): Partial<Response> {
    const base = { validHost: req.host, originalRequest: req };
    const notFound = (what: string) => ({
      ...base,
      messageResponse: { case: 'errorResponse' as const, value: create(v1.ErrorResponseSchema, { errorCode: NOT_FOUND, errorMessage: what }) },
    });
    const files = (file: DescFile) => ({
      ...base,
      messageResponse: {
        case: 'fileDescriptorResponse' as const,
        value: create(v1.FileDescriptorResponseSchema, { fileDescriptorProto: withDependencies(file).map((f) => this.encode(f)) }),
      },
    });
    const r = req.messageRequest;
    switch (r.case) {
      case 'listServices':
        return {
          ...base,
          messageResponse: {
            case: 'listServicesResponse',
            value: create(v1.ListServiceResponseSchema, { service: this.serviceNames.map((name) => create(v1.ServiceResponseSchema, { name })) }),
          },
        };
      case 'fileByFilename': {
        const file = this.files.get(r.value);
        return file ? files(file) : notFound(`file not found: ${r.value}`);
      }
      case 'fileContainingSymbol': {
        const file = this.fileOfSymbol(r.value);
        return file ? files(file) : notFound(`symbol not found: ${r.value}`);
      }
      case 'fileContainingExtension':
        return notFound(`extension not found: ${r.value.containingType} ${r.value.extensionNumber}`);
      case 'allExtensionNumbersOfType':
        return this.registry.getMessage(r.value)
          ? { ...base, messageResponse: { case: 'allExtensionNumbersResponse', value: create(v1.ExtensionNumberResponseSchema, { baseTypeName: r.value }) } }
          : notFound(`type not found: ${r.value}`);
      default:
        return {
          ...base,
          messageResponse: {
            case: 'errorResponse',
            value: create(v1.ErrorResponseSchema, { errorCode: UNIMPLEMENTED, errorMessage: 'the request names no known message_request' }),
          },
        };
    }
  }

  private fileOfSymbol(symbol: string): DescFile | undefined {
    const name = symbol.replace(/^\./, '');
    const direct = this.registry.get(name);
    if (direct && 'file' in direct) return direct.file;
    // A method (pkg.Service.Method) or a field (pkg.Message.field): look up the parent.
    const parentName = name.slice(0, name.lastIndexOf('.'));
    const member = name.slice(parentName.length + 1);
    const service = this.registry.getService(parentName);
    if (service?.methods.some((m) => m.name === member)) return service.file;
    const message = this.registry.getMessage(parentName);
    if (message?.fields.some((f) => f.name === member)) return message.file;
    return undefined;
  }

  private encode(file: DescFile): Uint8Array {
    let bytes = this.encoded.get(file.proto.name);
    if (!bytes) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      this.encoded.set(file.proto.name, bytes);
    }
    return bytes;
  }
}

/** A file and everything it imports, transitively, each once. */
function withDependencies(file: DescFile): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.set(f.proto.name, f);
    f.dependencies.forEach(visit);
  };
  visit(file);
  return [...seen.values()];
}
