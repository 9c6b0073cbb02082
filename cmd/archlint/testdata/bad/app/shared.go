package app

import "example.com/bad/app/review"

var _ = review.X
