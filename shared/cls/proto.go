package cls

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"salon/shared/booking"
)

// The keys of each shipped log, the same in the protobuf upload and the JSON line.
// CLS rejects keys that start with "_".
const (
	KeyAuditID    = "audit_id" // the database id: a record delivered twice has the same one
	KeyEvent      = "event"
	KeyBookingID  = "booking_id"
	KeySlotID     = "slot_id"
	KeyFromStatus = "from_status"
	KeyToStatus   = "to_status"
	KeyActor      = "actor"
	KeyReason     = "reason"
	KeyCreatedAt  = "created_at"
)

// Field numbers of cls.proto (proto2), as in tencentcloud-cls-sdk-go v1.0.14:
//
//	message LogGroupList { repeated LogGroup logGroupList = 1; }
//	message LogGroup { repeated Log logs = 1; optional string contextFlow = 2;
//	    optional string filename = 3; optional string source = 4;
//	    repeated LogTag logTags = 5; optional string hostname = 6; }
//	message Log { required int64 time = 1; repeated Content contents = 2;
//	    optional int64 collectTime = 3; }
//	message Content { required string key = 1; required string value = 2; }
//	message LogTag { required string key = 1; required string value = 2; }
const (
	fieldListGroups = 1

	fieldGroupLogs        = 1
	fieldGroupContextFlow = 2
	fieldGroupFilename    = 3
	fieldGroupSource      = 4
	fieldGroupTags        = 5
	fieldGroupHostname    = 6

	fieldLogTime        = 1
	fieldLogContents    = 2
	fieldLogCollectTime = 3

	fieldPairKey   = 1 // Content and LogTag
	fieldPairValue = 2
)

// LogGroup is a decoded cls.proto LogGroup.
type LogGroup struct {
	Source      string
	Filename    string
	ContextFlow string
	Hostname    string
	Tags        []Content
	Logs        []Log
}

// Log is a decoded cls.proto Log. TimeMs is the "time" field; this package always
// writes milliseconds.
type Log struct {
	TimeMs   int64
	Contents []Content
}

// Content is one key/value of a Log (and the shape of a LogTag).
type Content struct {
	Key   string
	Value string
}

// Get returns the value of the first content named key, or "" if there is none.
func (l Log) Get(key string) string {
	for _, c := range l.Contents {
		if c.Key == key {
			return c.Value
		}
	}
	return ""
}

// recordContents flattens a record into the contents of one log.
func recordContents(rec booking.AuditRecord) []Content {
	return []Content{
		{KeyAuditID, strconv.FormatInt(rec.ID, 10)},
		{KeyEvent, rec.Event},
		{KeyBookingID, strconv.FormatInt(rec.BookingID, 10)},
		{KeySlotID, strconv.FormatInt(rec.SlotID, 10)},
		{KeyFromStatus, strconv.Itoa(rec.FromStatus)},
		{KeyToStatus, strconv.Itoa(rec.ToStatus)},
		{KeyActor, rec.Actor},
		{KeyReason, rec.Reason},
		{KeyCreatedAt, rec.CreatedAt.UTC().Format(time.RFC3339Nano)},
	}
}

// EncodeLogGroupList encodes recs as a LogGroupList holding one LogGroup (with source,
// when not empty) and one Log per record, uncompressed: the body of an UploadLog request.
func EncodeLogGroupList(source string, recs []booking.AuditRecord) []byte {
	var group, log, content []byte
	for _, rec := range recs {
		log = protowire.AppendTag(log[:0], fieldLogTime, protowire.VarintType)
		log = protowire.AppendVarint(log, uint64(rec.CreatedAt.UnixMilli()))
		for _, c := range recordContents(rec) {
			// Both fields are required, so an empty value is still written.
			content = protowire.AppendTag(content[:0], fieldPairKey, protowire.BytesType)
			content = protowire.AppendString(content, c.Key)
			content = protowire.AppendTag(content, fieldPairValue, protowire.BytesType)
			content = protowire.AppendString(content, c.Value)
			log = protowire.AppendTag(log, fieldLogContents, protowire.BytesType)
			log = protowire.AppendBytes(log, content)
		}
		group = protowire.AppendTag(group, fieldGroupLogs, protowire.BytesType)
		group = protowire.AppendBytes(group, log)
	}
	if source != "" {
		group = protowire.AppendTag(group, fieldGroupSource, protowire.BytesType)
		group = protowire.AppendString(group, source)
	}
	out := make([]byte, 0, len(group)+protowire.SizeTag(fieldListGroups)+protowire.SizeBytes(len(group)))
	out = protowire.AppendTag(out, fieldListGroups, protowire.BytesType)
	return protowire.AppendBytes(out, group)
}

// DecodeLogGroupList decodes a LogGroupList. It is strict: a missing required field, a
// wrong wire type or a truncated message is an error. Unknown fields are skipped.
func DecodeLogGroupList(b []byte) ([]LogGroup, error) {
	var groups []LogGroup
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != fieldListGroups {
			return nil
		}
		if typ != protowire.BytesType {
			return wireTypeError("LogGroupList.logGroupList", typ)
		}
		g, err := decodeLogGroup(v)
		if err != nil {
			return fmt.Errorf("logGroupList[%d]: %w", len(groups), err)
		}
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cls: decode LogGroupList: %w", err)
	}
	return groups, nil
}

func decodeLogGroup(b []byte) (LogGroup, error) {
	var g LogGroup
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var str *string
		switch num {
		case fieldGroupLogs:
			if typ != protowire.BytesType {
				return wireTypeError("LogGroup.logs", typ)
			}
			l, err := decodeLog(v)
			if err != nil {
				return fmt.Errorf("logs[%d]: %w", len(g.Logs), err)
			}
			g.Logs = append(g.Logs, l)
			return nil
		case fieldGroupTags:
			if typ != protowire.BytesType {
				return wireTypeError("LogGroup.logTags", typ)
			}
			t, err := decodePair("LogTag", v)
			if err != nil {
				return fmt.Errorf("logTags[%d]: %w", len(g.Tags), err)
			}
			g.Tags = append(g.Tags, t)
			return nil
		case fieldGroupContextFlow:
			str = &g.ContextFlow
		case fieldGroupFilename:
			str = &g.Filename
		case fieldGroupSource:
			str = &g.Source
		case fieldGroupHostname:
			str = &g.Hostname
		default:
			return nil
		}
		if typ != protowire.BytesType {
			return wireTypeError("LogGroup string field", typ)
		}
		*str = string(v)
		return nil
	})
	return g, err
}

func decodeLog(b []byte) (Log, error) {
	var l Log
	hasTime := false
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case fieldLogTime:
			if typ != protowire.VarintType {
				return wireTypeError("Log.time", typ)
			}
			l.TimeMs, hasTime = int64(n), true
		case fieldLogContents:
			if typ != protowire.BytesType {
				return wireTypeError("Log.contents", typ)
			}
			c, err := decodePair("Content", v)
			if err != nil {
				return fmt.Errorf("contents[%d]: %w", len(l.Contents), err)
			}
			l.Contents = append(l.Contents, c)
		}
		return nil
	})
	if err == nil && !hasTime {
		err = errors.New("Log: required field time is missing")
	}
	return l, err
}

func decodePair(msg string, b []byte) (Content, error) {
	var c Content
	hasKey, hasValue := false, false
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case fieldPairKey:
			if typ != protowire.BytesType {
				return wireTypeError(msg+".key", typ)
			}
			c.Key, hasKey = string(v), true
		case fieldPairValue:
			if typ != protowire.BytesType {
				return wireTypeError(msg+".value", typ)
			}
			c.Value, hasValue = string(v), true
		}
		return nil
	})
	switch {
	case err != nil:
	case !hasKey:
		err = fmt.Errorf("%s: required field key is missing", msg)
	case !hasValue:
		err = fmt.Errorf("%s %q: required field value is missing", msg, c.Key)
	}
	return c, err
}

// eachField calls fn for every field of one message: v holds the bytes of a
// length-delimited field and n the value of a varint field.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(b)
		if tagLen < 0 {
			return protowire.ParseError(tagLen)
		}
		b = b[tagLen:]
		var (
			v      []byte
			n      uint64
			valLen int
		)
		switch typ {
		case protowire.BytesType:
			v, valLen = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, valLen = protowire.ConsumeVarint(b)
		default:
			valLen = protowire.ConsumeFieldValue(num, typ, b)
		}
		if valLen < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(valLen))
		}
		b = b[valLen:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

func wireTypeError(field string, typ protowire.Type) error {
	return fmt.Errorf("%s: unexpected wire type %d", field, typ)
}
