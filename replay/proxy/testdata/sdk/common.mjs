// Shared helpers of the SDK scripts run by sdk_test.go against finrepro
// proxy. Every script prints what the SDK gave it, one labelled JSON line
// per result, and nothing that varies between runs.

// out prints one result.
export function out(label, value) {
  process.stdout.write(label + " " + JSON.stringify(value) + "\n");
}

// retried runs fn until it succeeds, at most 4 times: a stream that breaks
// off or carries an error event is tried again, as a harness would. Only
// the successful result is printed, so that a recording run (which sees
// the failures) and an offline run (which does not) print the same.
export async function retried(fn) {
  let last;
  for (let i = 0; i < 4; i++) {
    try {
      return await fn();
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

// collect reads a stream into an array of events.
export async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  return events;
}
