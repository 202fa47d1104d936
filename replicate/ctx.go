package replicate

import "context"

func contextBackground() context.Context { return context.Background() }
