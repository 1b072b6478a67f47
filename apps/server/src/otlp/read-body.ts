import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { GovernorError } from '../errors.ts';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * Reads a request body, then inflates it if compressed. The cap applies to the bytes on the wire
 * and again to the inflated bytes — zlib stops at maxOutputLength, so a gzip bomb costs at most
 * the cap, never the bomb's full size.
 */
export async function readBody(
  stream: IncomingMessage,
  encoding: string | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const enc = (encoding ?? 'identity').trim().toLowerCase();
  if (enc !== 'identity' && enc !== 'gzip' && enc !== 'deflate' && enc !== '') {
    stream.resume();
    throw new GovernorError(
      'GOV_ERR_OTLP_UNSUPPORTED_ENCODING',
      `Content-Encoding "${enc}" is not supported; send gzip, deflate or an uncompressed body`,
    );
  }
  const declared = Number(stream.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    stream.resume();
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of stream) {
    received += (chunk as Buffer).length;
    if (received > maxBytes) {
      stream.resume();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks, received);
  if (enc === 'gzip' || enc === 'deflate') {
    try {
      return enc === 'gzip'
        ? await gunzipAsync(raw, { maxOutputLength: maxBytes })
        : await inflateAsync(raw, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes, true);
      throw new GovernorError(
        'GOV_ERR_OTLP_UNDECODABLE',
        `the ${enc} body cannot be inflated: ${(error as Error).message}`,
      );
    }
  }
  return raw;
}

function tooLarge(maxBytes: number, inflated = false): GovernorError {
  return new GovernorError(
    'GOV_ERR_OTLP_BODY_TOO_LARGE',
    `the request body${inflated ? ' inflates to' : ' is'} more than ${maxBytes} bytes; send smaller batches (e.g. lower the exporter's max batch size)`,
  );
}
