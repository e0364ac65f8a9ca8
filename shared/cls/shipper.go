// Package cls ships audit records to Tencent Cloud Log Service (CLS) through the cloud
// API 3.0 action UploadLog, signed with TC3-HMAC-SHA256 by tencentcloud-sdk-go/common.
//
// The cloud API is used rather than the CLS Go SDK because that SDK sends plain HTTP by
// default and skips certificate checks on HTTPS; the cloud API client verifies TLS
// normally and has no dependencies. Records are also written to stdout as one JSON line
// each (WriteJSONLine), which SCF forwards to CLS on a best-effort basis.
package cls

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"

	"salon/shared/booking"
	"salon/shared/cloudapi"
)

// The cloud API action this package calls.
const (
	Service = "cls"
	Version = "2020-10-16"
	Action  = "UploadLog"
)

// MaxBatch is the most records Ship puts in one request; larger inputs are split.
const MaxBatch = 1000

// DefaultTimeout bounds one request when the caller's context has no deadline.
const DefaultTimeout = 3 * time.Second

// Shipper uploads audit records to one CLS topic. It is safe for concurrent use.
type Shipper struct {
	// Timeout bounds each request when the context passed to Ship has no deadline.
	// New sets it to DefaultTimeout; change it before the first Ship.
	Timeout time.Duration

	topicID string
	cred    *EnvCredential
	client  *common.Client
}

// New returns a Shipper for cfg that signs with the credentials getenv returns at the
// time of each request (os.Getenv when getenv is nil).
func New(cfg Config, getenv func(string) string) *Shipper {
	region := cfg.Region
	if region == "" {
		region = DefaultRegion
	}
	// A failed upload returns at once (no SDK retries) and the caller keeps the
	// records for the next run.
	cp := cloudapi.Profile(cfg.Endpoint)

	cred := NewEnvCredential(getenv)
	return &Shipper{
		Timeout: DefaultTimeout,
		topicID: cfg.TopicID,
		cred:    cred,
		client:  common.NewCommonClient(cred, region, cp),
	}
}

// ShipError reports a failed upload. The first Shipped records (whole batches, 0 when
// the first request failed) were accepted by CLS; the rest were not sent or not accepted.
type ShipError struct {
	Shipped int
	Err     error
}

func (e *ShipError) Error() string {
	return fmt.Sprintf("cls: upload failed after %d records shipped: %v", e.Shipped, e.Err)
}

func (e *ShipError) Unwrap() error { return e.Err }

// Ship uploads recs in order, at most MaxBatch per request, and stops at the first
// failure. A CLS error answer (*errors.TencentCloudSDKError of the SDK) or a transport
// error comes back as a *ShipError; the caller keeps the records that were not shipped.
// Sending a record again is harmless: its audit_id identifies the duplicate.
func (s *Shipper) Ship(ctx context.Context, source string, recs []booking.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if s.topicID == "" {
		return errors.New("cls: no topic id configured")
	}
	for _, rec := range recs {
		// Checked before anything is sent so a bad record cannot half-ship a batch.
		if rec.ID <= 0 {
			return fmt.Errorf("cls: audit record without id (event %q): only stored records are shipped", rec.Event)
		}
		if rec.CreatedAt.IsZero() {
			return fmt.Errorf("cls: audit record %d has no CreatedAt", rec.ID)
		}
	}
	if err := s.cred.Check(); err != nil {
		return err
	}
	for start := 0; start < len(recs); start += MaxBatch {
		end := min(start+MaxBatch, len(recs))
		if err := s.upload(ctx, source, recs[start:end]); err != nil {
			return &ShipError{Shipped: start, Err: err}
		}
	}
	return nil
}

// upload sends one UploadLog request.
func (s *Shipper) upload(ctx context.Context, source string, recs []booking.AuditRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	req := tchttp.NewCommonRequest(Service, Version, Action)
	req.SetContext(ctx)
	req.SetOctetStreamParameters(map[string]string{"X-CLS-TopicId": s.topicID}, EncodeLogGroupList(source, recs))
	if err := s.client.SendOctetStream(req, tchttp.NewCommonResponse()); err != nil {
		return fmt.Errorf("UploadLog of %d records to topic %s: %w", len(recs), s.topicID, err)
	}
	return nil
}
