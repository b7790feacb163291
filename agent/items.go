package agent

// Item statuses tuttid writes or looks for (RuntimeMessage.Status). The
// set is open: a provider's item may carry others (declined, ...).
const (
	ItemInProgress  = "in_progress"
	ItemCompleted   = "completed"
	ItemFailed      = "failed"
	ItemInterrupted = "interrupted"
	// ItemIncomplete ends an item whose turn completed when neither the
	// event stream nor the provider's record of the turn completed it.
	ItemIncomplete = "incomplete"
)
