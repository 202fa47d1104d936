package interop

import (
	"encoding/json"
)

// StoreRecords is the `_schemas` topic Schema Registry would have written
// for the fixture: a NOOP and the default CONFIG as a registry writes them
// when it starts, a SCHEMA record per registration (schemaType left out for
// one Avro schema, as registries before 5.5 wrote them), a DELETE_SUBJECT
// for each soft delete and a tombstone per version for each permanent one
// (KafkaSchemaRegistry.deleteSubject). Key and value JSON follow the
// registry's SchemaRegistryKey and SchemaValue classes (keys with "magic";
// NON_EMPTY values, so no empty "references").
func (f *Fixture) StoreRecords() []Record {
	var out []Record
	add := func(key map[string]any, value any) {
		k, _ := json.Marshal(ordered(key, "keytype", "subject", "version", "magic"))
		var v []byte
		if value != nil {
			v, _ = json.Marshal(value)
		}
		out = append(out, Record{Topic: "_schemas", Key: k, Value: v})
	}
	add(map[string]any{"keytype": "NOOP", "magic": 0}, nil)
	add(map[string]any{"keytype": "CONFIG", "magic": 0}, map[string]any{"compatibilityLevel": "BACKWARD"})
	for i, r := range f.Registrations {
		val := map[string]any{"subject": r.Subject, "version": r.Version, "id": r.ID, "schemaType": r.Type,
			"schema": r.Schema, "deleted": false}
		order := []string{"subject", "version", "id", "schemaType", "references", "schema", "deleted"}
		if len(r.References) > 0 {
			val["references"] = r.References
		}
		if i == 0 {
			delete(val, "schemaType") // an old registry's record: Avro by default
		}
		add(map[string]any{"keytype": "SCHEMA", "subject": r.Subject, "version": r.Version, "magic": 1}, ordered(val, order...))
	}
	for _, d := range f.Deletions {
		if !d.Permanent {
			add(map[string]any{"keytype": "DELETE_SUBJECT", "subject": d.Subject, "magic": 0},
				ordered(map[string]any{"subject": d.Subject, "version": maxInt(d.Versions)}, "subject", "version"))
			continue
		}
		for i := len(d.Versions) - 1; i >= 0; i-- {
			add(map[string]any{"keytype": "SCHEMA", "subject": d.Subject, "version": d.Versions[i], "magic": 1}, nil)
		}
	}
	return out
}

func maxInt(vs []int) int {
	m := 0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// orderedMap marshals its fields in the order given, as Jackson writes a
// class's properties.
type orderedMap struct {
	m     map[string]any
	order []string
}

func ordered(m map[string]any, order ...string) orderedMap { return orderedMap{m, order} }

func (o orderedMap) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for _, k := range o.order {
		v, ok := o.m[k]
		if !ok {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}
