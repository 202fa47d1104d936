package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Registry is a Source over a running Schema Registry's REST API (Confluent
// Schema Registry and the registries that speak its API): GET
// /schemas/ids/{id} and GET /subjects/{subject}/versions/{version}, with
// deleted=true so that soft-deleted schemas are found as deserializers
// find them. Answers are cached; a URL's user info is sent as basic
// authentication. Responses over maxResponseBytes are refused.
type Registry struct {
	base   *url.URL
	client *http.Client

	mu   sync.Mutex
	ids  map[int32]*Schema
	vers map[subjectVersion]*Schema
}

const (
	maxResponseBytes = 16 << 20
	registryTimeout  = 10 * time.Second
)

// NewRegistry returns a Source for the registry at rawURL (http or https).
// client nil is a client with a 10 s timeout.
func NewRegistry(rawURL string, client *http.Client) (*Registry, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("schema registry URL %q: want http://host:port or https://...", rawURL)
	}
	if client == nil {
		client = &http.Client{Timeout: registryTimeout}
	}
	return &Registry{base: u, client: client, ids: map[int32]*Schema{}, vers: map[subjectVersion]*Schema{}}, nil
}

// ByID implements Source.
func (r *Registry) ByID(id int32) (*Schema, error) {
	r.mu.Lock()
	sc := r.ids[id]
	r.mu.Unlock()
	if sc != nil {
		return sc, nil
	}
	var v restValue
	if err := r.get(fmt.Sprintf("schemas/ids/%d", id), url.Values{}, &v, fmt.Sprintf("id %d", id)); err != nil {
		return nil, err
	}
	if v.Schema == nil {
		return nil, fmt.Errorf("schema registry: id %d: the answer has no schema", id)
	}
	sc, err := v.toSchema()
	if err != nil {
		return nil, err
	}
	sc.ID = id
	r.mu.Lock()
	r.ids[id] = sc
	r.mu.Unlock()
	return sc, nil
}

// ByVersion implements Source.
func (r *Registry) ByVersion(subject string, version int) (*Schema, error) {
	sv := subjectVersion{subject, version}
	r.mu.Lock()
	sc := r.vers[sv]
	r.mu.Unlock()
	if sc != nil {
		return sc, nil
	}
	ver := "latest"
	q := url.Values{}
	if version >= 0 {
		ver = strconv.Itoa(version)
		q.Set("deleted", "true")
	}
	var v restValue
	what := fmt.Sprintf("subject %q version %s", subject, ver)
	if err := r.get("subjects/"+url.PathEscape(subject)+"/versions/"+ver, q, &v, what); err != nil {
		return nil, err
	}
	if v.Schema == nil {
		return nil, fmt.Errorf("schema registry: %s: the answer has no schema", what)
	}
	sc, err := v.toSchema()
	if err != nil {
		return nil, err
	}
	if sc.Subject == "" {
		sc.Subject = subject
	}
	r.mu.Lock()
	r.vers[sv] = sc
	r.mu.Unlock()
	return sc, nil
}

func (r *Registry) get(path string, q url.Values, out any, what string) error {
	u := *r.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + path
	u.RawPath = ""
	u.RawQuery = q.Encode()
	u.User = nil
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json")
	if ui := r.base.User; ui != nil {
		pw, _ := ui.Password()
		req.SetBasicAuth(ui.Username(), pw)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("schema registry: %s: %w", u.Redacted(), err)
	}
	if len(body) > maxResponseBytes {
		return fmt.Errorf("schema registry: %s: answer over %d bytes", u.Redacted(), maxResponseBytes)
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: the registry does not know %s", ErrUnknownSchema, what)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("schema registry: %s: %s: %s", u.Redacted(), resp.Status, strings.TrimSpace(string(body[:min(len(body), 200)])))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("schema registry: %s: %w", u.Redacted(), err)
	}
	return nil
}
