import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { GovernorError } from '../errors.ts';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * Reads a request body, then inflates it if compressed. The cap applies to the bytes on the wire
 * and again to the inflated bytes — zlib stops at maxOutputLength, so a gzip bomb costs at most
 * the cap, never the bomb's full size. Past the cap the rest of the body is discarded, not
 * buffered; the stream is never destroyed, so the client still receives the 413.
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
  const raw = await collect(stream, maxBytes);
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

function collect(stream: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      cleanup();
      // Keep the stream flowing so the rest of the body is read and dropped.
      stream.on('error', () => {});
      stream.resume();
      reject(tooLarge(maxBytes));
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(
        new GovernorError(
          'GOV_ERR_REQUEST_INVALID',
          `the request body could not be read: ${error.message}`,
          undefined,
          {
            cause: error,
          },
        ),
      );
    };
    const onClose = () => {
      if (stream.readableEnded) return;
      cleanup();
      reject(
        new GovernorError(
          'GOV_ERR_REQUEST_INVALID',
          'the client closed the connection before the body was complete',
        ),
      );
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

function tooLarge(maxBytes: number, inflated = false): GovernorError {
  return new GovernorError(
    'GOV_ERR_OTLP_BODY_TOO_LARGE',
    `the request body${inflated ? ' inflates to' : ' is'} more than ${maxBytes} bytes; send smaller batches (e.g. lower the exporter's max batch size)`,
  );
}
