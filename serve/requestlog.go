package serve

import (
	"strconv"
	"time"

	"github.com/klog-dev/klog/ndjson"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logRequest writes one request-log line, in the shape of the broker's
// kafka.request.logger "Completed request" JSON (RequestChannel.scala,
// RequestConvertToJson): requestHeader, connection, totalTimeMs,
// securityProtocol, listener, clientInformation; plus klog's "type",
// "apiName", "errorCode" (the first error in the response) and
// "responseBytes".
func (cn *conn) logRequest(h header, start time.Time, code int16, n int) {
	w := cn.s.cfg.RequestLog
	if w == nil {
		return
	}
	b := make([]byte, 0, 384)
	b = append(b, `{"type":"request",`...)
	b = cn.appendHeader(b, h)
	b = append(b, `,"totalTimeMs":`...)
	b = strconv.AppendFloat(b, float64(time.Since(start).Microseconds())/1000, 'f', 3, 64)
	proto := "PLAINTEXT"
	if cn.tls {
		proto = "SSL"
	}
	if cn.s.cfg.Users != nil {
		proto = "SASL_" + proto
	}
	b = append(b, `,"securityProtocol":"`...)
	b = append(b, proto...)
	b = append(b, `","listener":"`...)
	b = append(b, proto...)
	b = append(b, `","principal":"`...)
	b = append(b, cn.principal()...)
	b = append(b, `","clientInformation":{"softwareName":`...)
	b = appendJSONString(b, orUnknown(cn.client.software))
	b = append(b, `,"softwareVersion":`...)
	b = appendJSONString(b, orUnknown(cn.client.version))
	b = append(b, `},"errorCode":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"responseBytes":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "}\n"...)
	cn.s.logMu.Lock()
	w.Write(b)
	cn.s.logMu.Unlock()
}

// logError records why a connection is being closed.
func (cn *conn) logError(h header, msg string) {
	w := cn.s.cfg.RequestLog
	if w == nil {
		return
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"type":"requestError",`...)
	b = cn.appendHeader(b, h)
	b = append(b, `,"error":`...)
	b = appendJSONString(b, msg)
	b = append(b, `,"action":"closed connection"}`+"\n"...)
	cn.s.logMu.Lock()
	w.Write(b)
	cn.s.logMu.Unlock()
}

func (cn *conn) appendHeader(b []byte, h header) []byte {
	b = append(b, `"requestHeader":{"requestApiKey":`...)
	b = strconv.AppendInt(b, int64(h.key), 10)
	b = append(b, `,"requestApiVersion":`...)
	b = strconv.AppendInt(b, int64(h.version), 10)
	b = append(b, `,"correlationId":`...)
	b = strconv.AppendInt(b, int64(h.correlation), 10)
	b = append(b, `,"clientId":`...)
	b = appendJSONString(b, h.clientID)
	b = append(b, `},"apiName":`...)
	name := kmsg.NameForKey(h.key)
	if name == "" {
		name = "Unknown"
	}
	b = appendJSONString(b, name)
	b = append(b, `,"connection":`...)
	b = appendJSONString(b, cn.name)
	return b
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// appendJSONString appends s as a JSON string: ndjson's, the one encoding
// (invalid UTF-8 becomes U+FFFD).
func appendJSONString(b []byte, s string) []byte { return ndjson.String(b, s) }
