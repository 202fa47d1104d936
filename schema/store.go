package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The `_schemas` topic (the registry's kafkastore.topic): each record's key
// and value are JSON written by the registry's SchemaRegistrySerializer.
// Keys carry "keytype"; the store is the last value of each key, replayed
// in offset order as KafkaStoreMessageHandler.handleUpdate applies them:
//
//   - SCHEMA {subject, version} → {subject, version, id, schemaType,
//     references, schema, deleted}: a version registered, or soft-deleted
//     when "deleted" is true (still served by id); a null value (a
//     tombstone) is a hard delete: the version is gone, and so is its id
//     once no version holds it.
//   - DELETE_SUBJECT {subject} → {subject, version}: soft-deletes versions
//     1 to version of the subject.
//   - CLEAR_SUBJECT {subject} → {subject}: removes the subject's
//     soft-deleted versions.
//   - CONFIG, MODE, NOOP, CONTEXT, ASSOC: no schema; counted only.
//
// Key types are Schema Registry's SchemaRegistryKeyType.
const (
	keySchema        = "SCHEMA"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
)

// Store is the registry's state rebuilt from its `_schemas` records. The
// zero value is an empty store; it is not safe for concurrent use while
// records are applied, and safe for concurrent lookups after.
type Store struct {
	versions map[subjectVersion]*Schema
	// ids maps a schema id of the default context to the versions that
	// hold it, in registration order.
	ids map[int32][]subjectVersion
	// Records counts the records applied, Other those of key types that
	// hold no schema (CONFIG, MODE, NOOP, ...).
	Records, Other int
}

type subjectVersion struct {
	subject string
	version int
}

type storeKey struct {
	KeyType string `json:"keytype"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type storeValue struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         *int32      `json:"id"`
	SchemaType string      `json:"schemaType"`
	References []Reference `json:"references"`
	Schema     *string     `json:"schema"`
	Deleted    bool        `json:"deleted"`
}

// Apply applies one `_schemas` record. A record that cannot be read (not
// JSON, an unknown key type, a SCHEMA value without an id or schema, a
// schema id already taken by a different schema, which the registry refuses
// too) returns an error and changes nothing; the caller reports it with
// the record's offset and goes on.
func (s *Store) Apply(key, value []byte) error {
	if s.versions == nil {
		s.versions = map[subjectVersion]*Schema{}
		s.ids = map[int32][]subjectVersion{}
	}
	s.Records++
	var k storeKey
	if err := json.Unmarshal(key, &k); err != nil {
		return fmt.Errorf("_schemas key is not the registry's JSON: %w", err)
	}
	switch k.KeyType {
	case keySchema:
		return s.applySchema(k, value)
	case keyDeleteSubject, keyClearSubject:
		if value == nil {
			return nil // tombstones of these keys change nothing
		}
		var v storeValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("_schemas %s value: %w", k.KeyType, err)
		}
		if v.Subject == "" {
			v.Subject = k.Subject
		}
		if k.KeyType == keyDeleteSubject {
			s.deleteSubject(v.Subject, v.Version)
		} else {
			s.clearSubject(v.Subject)
		}
		return nil
	case "CONFIG", "MODE", "NOOP", "CONTEXT", "ASSOC":
		s.Other++
		return nil
	}
	return fmt.Errorf("_schemas key: unknown keytype %q", k.KeyType)
}

func (s *Store) applySchema(k storeKey, value []byte) error {
	sv := subjectVersion{k.Subject, k.Version}
	if value == nil {
		s.remove(sv)
		return nil
	}
	var v storeValue
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("_schemas SCHEMA value: %w", err)
	}
	if v.ID == nil || v.Schema == nil {
		return errors.New("_schemas SCHEMA value: no id or no schema")
	}
	t, err := parseType(v.SchemaType)
	if err != nil {
		return fmt.Errorf("_schemas SCHEMA value: %w", err)
	}
	sc := &Schema{ID: *v.ID, Subject: k.Subject, Version: k.Version, Type: t, Text: *v.Schema,
		References: v.References, Deleted: v.Deleted}
	if ctx := contextOf(sc.Subject); ctx == "" {
		for _, other := range s.ids[sc.ID] {
			if o := s.versions[other]; o != nil && other != sv && o.Text != sc.Text {
				return fmt.Errorf("_schemas SCHEMA value: id %d is already %q version %d with another schema (the registry ignores this one)",
					sc.ID, o.Subject, o.Version)
			}
		}
	}
	if old := s.versions[sv]; old != nil && old.ID != sc.ID {
		s.remove(sv)
	}
	s.versions[sv] = sc
	if contextOf(sc.Subject) == "" && !contains(s.ids[sc.ID], sv) {
		s.ids[sc.ID] = append(s.ids[sc.ID], sv)
	}
	return nil
}

// remove is a hard delete of one version (InMemoryCache.schemaTombstoned).
func (s *Store) remove(sv subjectVersion) {
	old := s.versions[sv]
	if old == nil {
		return
	}
	delete(s.versions, sv)
	list := s.ids[old.ID]
	for i, o := range list {
		if o == sv {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.ids, old.ID)
	} else {
		s.ids[old.ID] = list
	}
}

// deleteSubject soft-deletes versions 1..upTo (handleDeleteSubject).
func (s *Store) deleteSubject(subject string, upTo int) {
	for v := 1; v <= upTo; v++ {
		if sc := s.versions[subjectVersion{subject, v}]; sc != nil {
			sc.Deleted = true
		}
	}
}

// clearSubject hard-deletes the subject's soft-deleted versions
// (InMemoryCache.clearSubjects).
func (s *Store) clearSubject(subject string) {
	for sv, sc := range s.versions {
		if sv.subject == subject && sc.Deleted {
			s.remove(sv)
		}
	}
}

// ByID implements Source: the schema of id in the default context, soft
// deleted or not. When several versions hold the id (the same schema under
// several subjects) the first registered answers.
func (s *Store) ByID(id int32) (*Schema, error) {
	for _, sv := range s.ids[id] {
		if sc := s.versions[sv]; sc != nil {
			return sc, nil
		}
	}
	return nil, fmt.Errorf("%w: id %d is not in _schemas", ErrUnknownSchema, id)
}

// ByVersion implements Source. Version -1 is the latest version that is not
// soft-deleted; a given version is found deleted or not (references may
// point at soft-deleted versions, which the registry still resolves).
func (s *Store) ByVersion(subject string, version int) (*Schema, error) {
	if version >= 0 {
		if sc := s.versions[subjectVersion{subject, version}]; sc != nil {
			return sc, nil
		}
		return nil, fmt.Errorf("%w: subject %q version %d is not in _schemas", ErrUnknownSchema, subject, version)
	}
	var best *Schema
	for sv, sc := range s.versions {
		if sv.subject == subject && !sc.Deleted && (best == nil || sc.Version > best.Version) {
			best = sc
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: subject %q has no live version in _schemas", ErrUnknownSchema, subject)
	}
	return best, nil
}

// Schemas lists the store's schemas by subject and version.
func (s *Store) Schemas() []*Schema {
	out := make([]*Schema, 0, len(s.versions))
	for _, sc := range s.versions {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// contextOf is a qualified subject's context (":.ctx:subject"), "" for the
// default context, where the ids in payloads live.
func contextOf(subject string) string {
	if !strings.HasPrefix(subject, ":.") {
		return ""
	}
	if i := strings.Index(subject[2:], ":"); i >= 0 {
		if ctx := subject[2 : 2+i]; ctx != "" {
			return ctx
		}
	}
	return ""
}

func contains(list []subjectVersion, sv subjectVersion) bool {
	for _, o := range list {
		if o == sv {
			return true
		}
	}
	return false
}
