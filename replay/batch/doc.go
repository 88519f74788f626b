// Package batch records requests through the providers' batch APIs:
// OpenAI's Batch API (an input file uploaded to POST /v1/files with
// purpose "batch", then POST /v1/batches) and Anthropic's Message Batches
// (POST /v1/messages/batches). Submit splits the requests that are not
// stored into batches within the provider's limits, Status polls them,
// Collect downloads their results and stores every success in the cache
// as an exchange of source "batch" (with the batch id and the model the
// provider reported), and Cancel cancels them.
//
// Everything a later run needs is in a state folder, Dir/batch:
//
//	batch/state.json           the state, rewritten atomically
//	batch/lock                 held (flock) by the command running on the folder
//	batch/requests/NNNN.jsonl  the request objects of batch NNNN, one per line
//
// state.json (version 1) is one JSON object:
//
//	{"version": 1,
//	 "bundle": "/abs/bundle",      with submit --bundle: where collect copies results
//	 "batches": [{
//	  "local": "0001",              the batch's local name (its requests file)
//	  "provider": "openai",         the provider name of its requests
//	  "api": "openai",              "openai" or "anthropic"
//	  "base_url": "https://...",    where the batch lives
//	  "id": "batch_...",            the provider's id; "" while being created
//	  "input_file": "file-...",     OpenAI: the uploaded input file
//	  "status": "in_progress",      the provider's status, or "submitting"
//	  "counts": {...},              the provider's request counts
//	  "output_file": "...", "error_file": "...",   OpenAI result files
//	  "collected": false,           true once every result is stored or listed
//	  "keys": ["<key hex>", ...],   the cache keys of its requests, in order
//	  "failures": [{"key": ..., "cause": ..., "msg": ...}]   after collect
//	}]}
//
// No API key is written there: keys are read from the provider's
// environment variable at each call. A request is covered while a batch
// that is not collected holds it, or once it is stored; Submit sends only
// requests that nothing covers, so a rerun after a crash or a partial
// collect submits nothing twice, and the failures of a collected batch
// are submitted again by the next Submit.
package batch
