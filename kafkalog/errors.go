package kafkalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/partfs/partfs/partlog"
)

// where names what a call was about, for errors and log lines.
type where struct {
	broker    string
	topic     string
	partition int32 // -1: the topic as a whole
}

func (w where) String() string {
	s := "kafka"
	if w.broker != "" {
		s += " broker " + w.broker
	}
	if w.topic != "" {
		s += " topic " + w.topic
	}
	if w.partition >= 0 {
		s += fmt.Sprintf(" partition %d", w.partition)
	}
	return s
}

// classify wraps err, a failure of a call about w, so that it matches the
// partlog sentinel of its kind.
func classify(w where, op string, err error) error {
	if err == nil {
		return nil
	}
	if s := sentinel(err); s != nil && !errors.Is(err, s) {
		return fmt.Errorf("%s: %s: %w: %w", w, op, s, err)
	}
	return fmt.Errorf("%s: %s: %w", w, op, err)
}

// sentinel is the partlog error a Kafka or transport error stands for, or nil.
func sentinel(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kerr.RequestTimedOut):
		return partlog.ErrTimeout
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
		errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.DelegationTokenAuthorizationFailed):
		return partlog.ErrDenied
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return partlog.ErrNotFound
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return partlog.ErrTooLarge
	case errors.Is(err, kerr.TopicAlreadyExists):
		return partlog.ErrExists
	case errors.Is(err, kerr.InvalidConfig), errors.Is(err, kerr.InvalidRequest), errors.Is(err, kerr.InvalidTopicException),
		errors.Is(err, kerr.InvalidPartitions), errors.Is(err, kerr.PolicyViolation), errors.Is(err, kerr.InvalidReplicationFactor),
		errors.Is(err, kerr.InvalidRecord), errors.Is(err, kerr.InvalidTimestamp), errors.Is(err, kerr.CorruptMessage):
		return partlog.ErrInvalid
	}
	return nil
}

// retriable reports whether a produce or fetch that failed with err may be
// sent again after a metadata refresh (the same bytes: a duplicate is
// dropped by the broker).
func retriable(err error) bool {
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	return sentinel(err) == nil // a transport error
}
