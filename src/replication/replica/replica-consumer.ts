/**
 * The replica's durable pull consumer, made to agree with the position the
 * replica keeps with its data. The consumer is only a cache of that position:
 * whenever it could disagree, it is deleted and made again to start right
 * after the stored stream seq.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  ReplayPolicy,
  type Consumer,
  type ConsumerInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { JournalStream } from '../stream/journal-stream';

/** JetStream's code for "consumer not found". */
const CONSUMER_NOT_FOUND = 10014;

/**
 * Long enough for the biggest chunk to be applied: a redelivery while a
 * message is still being applied would only be skipped, but it costs a send.
 */
const ACK_WAIT_MS = 5 * 60_000;

/** Messages delivered ahead of the one being applied. */
const MAX_ACK_PENDING = 256;

async function consumerInfo(stream: JournalStream, name: string): Promise<ConsumerInfo | null> {
  try {
    return await stream.jetStreamManager.consumers.info(stream.settings.stream, name);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND) return null;
    throw error;
  }
}

/**
 * Whether the consumer delivers exactly what follows `afterStreamSeq`. Not
 * when its ack floor is elsewhere (the replica's data was restored, or it
 * crashed between storing its position and acking); and not while messages
 * are delivered but unacked: the server sends those again only after the
 * ack wait, behind later ones, and the replica applies in order only.
 */
export function consumerAgrees(info: ConsumerInfo, afterStreamSeq: number): boolean {
  return (
    info.ack_floor.stream_seq === afterStreamSeq &&
    info.num_ack_pending === 0 &&
    info.delivered.stream_seq === afterStreamSeq
  );
}

/**
 * The consumer `name`, delivering from `afterStreamSeq` + 1 on; `remake`
 * makes it again even when it seems to agree (a gap was met: the replica
 * reads the stream afresh once before it believes the gap).
 */
export async function openConsumer(
  stream: JournalStream,
  name: string,
  afterStreamSeq: number,
  remake: boolean,
  log: (message: string) => void,
): Promise<Consumer> {
  const streamName = stream.settings.stream;
  const info = await consumerInfo(stream, name);
  if (info === null || remake || !consumerAgrees(info, afterStreamSeq)) {
    if (info !== null) await stream.jetStreamManager.consumers.delete(streamName, name);
    log(`replica: consumer ${name} made to deliver from stream seq ${afterStreamSeq + 1}`);
    await stream.jetStreamManager.consumers.add(streamName, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: afterStreamSeq + 1,
      replay_policy: ReplayPolicy.Instant,
      filter_subject: stream.subject,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: MAX_ACK_PENDING,
    });
  }
  return stream.jetStream.consumers.get(streamName, name);
}
