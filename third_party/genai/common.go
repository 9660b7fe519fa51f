// Copyright 2024 Google LLC
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//      http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package genai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log"
	"math"
	"math/rand"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Ptr returns a pointer to its argument.
// It can be used to initialize pointer fields:
//
//	genai.GenerateContentConfig{Temperature: genai.Ptr(0.5)}
func Ptr[T any](t T) *T { return &t }

//nolint:unused
type converterFuncWithClientWithRoot func(*apiClient, map[string]any, map[string]any, map[string]any) (map[string]any, error)

type converterFuncWithRoot func(map[string]any, map[string]any, map[string]any) (map[string]any, error)

type transformerFunc[T any] func(T) (T, error)

// InternalSetValueByPath is an internal function used for setting values by path.
// This function is public only for internal purposes and its support is not guaranteed in future
// versions. External consumers must not use it.
func InternalSetValueByPath(data map[string]any, keys []string, value any) {
	setValueByPath(data, keys, value)
}

// setValueByPath handles setting values within nested maps, including handling array-like structures.
//
// Examples:
//
//	setValueByPath(map[string]any{}, []string{"a", "b"}, v)
//	  -> {"a": {"b": v}}
//
//	setValueByPath(map[string]any{}, []string{"a", "b[]", "c"}, []any{v1, v2})
//	  -> {"a": {"b": [{"c": v1}, {"c": v2}]}}
//
//	setValueByPath(map[string]any{"a": {"b": [{"c": v1}, {"c": v2}]}}, []string{"a", "b[]", "d"}, v3)
//	  -> {"a": {"b": [{"c": v1, "d": v3}, {"c": v2, "d": v3}]}}
func setValueByPath(data map[string]any, keys []string, value any) {
	if value == nil {
		return
	}
	for i, key := range keys[:len(keys)-1] {
		if strings.HasSuffix(key, "[]") {
			keyName := key[:len(key)-2]
			if _, ok := data[keyName]; !ok {
				if reflect.ValueOf(value).Kind() == reflect.Slice {
					data[keyName] = make([]map[string]any, reflect.ValueOf(value).Len())
				} else {
					data[keyName] = make([]map[string]any, 1)
				}
				for k := range data[keyName].([]map[string]any) {
					data[keyName].([]map[string]any)[k] = make(map[string]any)
				}
			}

			if reflect.ValueOf(value).Kind() == reflect.Slice {
				for j, d := range data[keyName].([]map[string]any) {
					if j >= reflect.ValueOf(value).Len() {
						continue
					}
					setValueByPath(d, keys[i+1:], reflect.ValueOf(value).Index(j).Interface())
				}
			} else {
				for _, d := range data[keyName].([]map[string]any) {
					setValueByPath(d, keys[i+1:], value)
				}
			}
			return
		} else if strings.HasSuffix(key, "[0]") {
			keyName := key[:len(key)-3]
			if _, ok := data[keyName]; !ok {
				data[keyName] = make([]map[string]any, 1)
				data[keyName].([]map[string]any)[0] = make(map[string]any)
			}
			setValueByPath(data[keyName].([]map[string]any)[0], keys[i+1:], value)
			return
		} else {
			if _, ok := data[key]; !ok {
				data[key] = make(map[string]any)
			}
			if _, ok := data[key].(map[string]any); !ok {
				data[key] = make(map[string]any)
			}
			data = data[key].(map[string]any)
		}
	}

	finalKey := keys[len(keys)-1]
	existingValue, exists := data[finalKey]

	if exists {
		// 1. Check if the new value is "empty" (nil, zero value, or empty collection)
		isNewValueEmpty := false
		if value == nil {
			isNewValueEmpty = true
		} else {
			valReflect := reflect.ValueOf(value)
			if valReflect.Kind() == reflect.Invalid { // Handles nil interface{}
				isNewValueEmpty = true
			} else if valReflect.IsZero() { // Covers zero values for primitives, nil for pointers/interfaces
				isNewValueEmpty = true
			} else if (valReflect.Kind() == reflect.Map || valReflect.Kind() == reflect.Slice) && valReflect.Len() == 0 {
				isNewValueEmpty = true
			}
		}

		if isNewValueEmpty {
			// If new value is empty, do not overwrite existing non-empty value.
			// This is triggered when handling tuning datasets.
			return
		}
		if reflect.DeepEqual(value, existingValue) {
			// Don't fail when overwriting value with same value
			return
		}
		if existingMap, ok1 := existingValue.(map[string]any); ok1 {
			if newMap, ok2 := value.(map[string]any); ok2 {
				// Instead of overwriting dictionary with another dictionary, merge them.
				// This is important for handling training and validation datasets in tuning.
				for k, v := range newMap {
					existingMap[k] = v
				}
				data[finalKey] = existingMap // Assign the updated map back
			}
		} else {
			log.Println("Error. Cannot set value for an existing key. Key: ", finalKey, "; Existing value: ", existingValue, "; New value: ", value)
		}
	} else {
		if finalKey == "_self" && reflect.TypeOf(value).Kind() == reflect.Map {
			// Iterate through the `value` map and copy its contents to `data`.
			if valMap, ok := value.(map[string]any); ok {
				for k, v := range valMap {
					data[k] = v
				}
			}
		} else {
			// If existing_data is None (or key doesn't exist), set the value directly.
			data[finalKey] = value
		}
	}
}

// InternalGetValueByPath is an internal function used for retrieving values by path.
// This function is public only for internal purposes and its support is not guaranteed in future
// versions. External consumers must not use it.
func InternalGetValueByPath(data any, keys []string) any {
	return getValueByPath(data, keys)
}

// getValueByPath retrieves a value from a nested map or slice or struct based on a path of keys.
//
// Examples:
//
//	getValueByPath(map[string]any{"a": {"b": "v"}}, []string{"a", "b"})
//	  -> "v"
//	getValueByPath(map[string]any{"a": {"b": [{"c": "v1"}, {"c": "v2"}]}}, []string{"a", "b[]", "c"})
//	  -> []any{"v1", "v2"}
func getValueByPath(data any, keys []string) any {
	if len(keys) == 1 && keys[0] == "_self" {
		return data
	}
	if len(keys) == 0 {
		return nil
	}
	var current any = data
	for i, key := range keys {
		if strings.HasSuffix(key, "[]") {

			keyName := key[:len(key)-2]
			switch v := current.(type) {
			case map[string]any:
				if sliceData, ok := v[keyName]; ok {
					var result []any
					switch concreteSliceData := sliceData.(type) {
					case []map[string]any:
						for _, d := range concreteSliceData {
							result = append(result, getValueByPath(d, keys[i+1:]))
						}
					case []any:
						for _, d := range concreteSliceData {
							result = append(result, getValueByPath(d, keys[i+1:]))
						}
					default:
						return nil
					}
					return result
				} else {
					return nil
				}
			default:
				return nil
			}
		} else {
			switch v := current.(type) {
			case map[string]any:
				current = v[key]
			default:
				return nil
			}
		}
	}
	return current
}

// getValueByPathOrDefault retrieves a value from a nested map or slice or struct based on a path of
// keys, or returns a default value.
func getValueByPathOrDefault(data any, keys []string, defaultValue any) any {
	if len(keys) == 1 && keys[0] == "_self" {
		return data
	}
	if len(keys) == 0 {
		return defaultValue
	}
	var current any = data
	for i, key := range keys {
		if strings.HasSuffix(key, "[]") {

			keyName := key[:len(key)-2]
			switch v := current.(type) {
			case map[string]any:
				if sliceData, ok := v[keyName]; ok {
					var result []any
					switch concreteSliceData := sliceData.(type) {
					case []map[string]any:
						for _, d := range concreteSliceData {
							result = append(result, getValueByPathOrDefault(d, keys[i+1:], defaultValue))
						}
					case []any:
						for _, d := range concreteSliceData {
							result = append(result, getValueByPathOrDefault(d, keys[i+1:], defaultValue))
						}
					default:
						return defaultValue
					}
					return result
				} else {
					return defaultValue
				}
			default:
				return defaultValue
			}
		} else {
			switch v := current.(type) {
			case map[string]any:
				var ok bool
				current, ok = v[key]
				if !ok {
					return defaultValue
				}
			default:
				return defaultValue
			}
		}
	}
	if current == nil {
		return defaultValue
	}
	return current
}

// InternalFormatMap is an internal function used for formatting maps.
// This function is public only for internal purposes and its support is not guaranteed in future
// versions. External consumers must not use it.
func InternalFormatMap(template string, variables map[string]any) (string, error) {
	return formatMap(template, variables)
}

func formatMap(template string, variables map[string]any) (string, error) {
	var buffer bytes.Buffer
	for i := 0; i < len(template); i++ {
		if template[i] == '{' {
			j := i + 1
			for j < len(template) && template[j] != '}' {
				j++
			}
			if j < len(template) {
				key := template[i+1 : j]
				if value, ok := variables[key]; ok {
					switch val := value.(type) {
					case string:
						buffer.WriteString(val)
					default:
						return "", errors.New("formatMap: nested interface or unsupported type found")
					}
				}
				i = j
			}
		} else {
			buffer.WriteByte(template[i])
		}
	}
	return buffer.String(), nil
}

// applyConverterToSlice calls converter function (with API client) to each element of the slice.
//
//nolint:unused
func applyConverterToSliceWithClientWithRoot(ac *apiClient, inputs []any, converter converterFuncWithClientWithRoot, rootObject map[string]any) ([]map[string]any, error) {
	var outputs []map[string]any
	for _, object := range inputs {
		object, err := converter(ac, object.(map[string]any), nil, rootObject)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, object)
	}
	return outputs, nil
}

// InternalApplyConverterToSliceWithRoot calls converter function to each element of the slice.
//
//nolint:unused
func InternalApplyConverterToSliceWithRoot(inputs []any, converter converterFuncWithRoot, rootObject map[string]any) ([]map[string]any, error) {
	return applyConverterToSliceWithRoot(inputs, converter, rootObject)
}

// applyConverterToSlice calls converter function to each element of the slice.
//
//nolint:unused
func applyConverterToSliceWithRoot(inputs []any, converter converterFuncWithRoot, rootObject map[string]any) ([]map[string]any, error) {
	var outputs []map[string]any
	for _, object := range inputs {
		object, err := converter(object.(map[string]any), nil, rootObject)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, object)
	}
	return outputs, nil
}

// applyItemTransformerToSlice calls item transformer function to each element of the slice.
func applyItemTransformerToSlice[T any](inputs []T, itemTransformer transformerFunc[T]) ([]T, error) {
	var outputs []T
	for _, input := range inputs {
		object, err := itemTransformer(input)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, object)
	}
	return outputs, nil
}

// InternalDeepMarshal is an internal function used for deep marshaling.
// This function is public only for internal purposes and its support is not guaranteed in future
// versions. External consumers must not use it.
func InternalDeepMarshal(input any, output *map[string]any) error {
	return deepMarshal(input, output)
}

func deepMarshal(input any, output *map[string]any) error {
	if inputBytes, err := json.Marshal(input); err != nil {
		return fmt.Errorf("deepMarshal: unable to marshal input: %w", err)
	} else if err := json.Unmarshal(inputBytes, output); err != nil {
		return fmt.Errorf("deepMarshal: unable to unmarshal input: %w", err)
	}
	return nil
}

func deepCopy[T any](original T, copied *T) error {
	bytes, err := json.Marshal(original)
	if err != nil {
		return err
	}

	err = json.Unmarshal(bytes, copied)
	return err
}

// InternalCreateURLQuery is an internal function used for creating URL queries.
// This function is public only for internal purposes and its support is not guaranteed in future
// versions. External consumers must not use it.
func InternalCreateURLQuery(query map[string]any) (string, error) {
	return createURLQuery(query)
}

// createURLQuery creates a URL query string from a map of key-value pairs.
// The keys are sorted alphabetically before being encoded.
// Supported value types are string, int, float64, bool, and []string.
// An error is returned if an unsupported type is encountered.
func createURLQuery(query map[string]any) (string, error) {
	v := url.Values{}
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := query[key]
		switch value := value.(type) {
		case string:
			v.Add(key, value)
		case int:
			v.Add(key, strconv.Itoa(value))
		case float64:
			v.Add(key, strconv.FormatFloat(value, 'f', -1, 64))
		case bool:
			v.Add(key, strconv.FormatBool(value))
		case []string:
			for _, item := range value {
				v.Add(key, item)
			}
		default:
			return "", fmt.Errorf("unsupported type: %T", value)
		}
	}
	return v.Encode(), nil
}

func yieldErrorAndEndIterator[T any](err error) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		if !yield(nil, err) {
			return
		}
	}
}

// Default HTTP retry configuration. The values mirror the Python SDK, which is
// the reference implementation for cross-language behavior.
const (
	defaultRetryAttempts     = 5 // Including the initial call.
	defaultRetryInitialDelay = 1.0
	defaultRetryMaxDelay     = 60.0
	defaultRetryExpBase      = 2.0
	defaultRetryJitter       = 1.0
)

// LINT.IfChange
var defaultRetryHTTPStatusCodes = []int32{
	408, // Request timeout.
	429, // Too many requests.
	500, // Internal server error.
	502, // Bad gateway.
	503, // Service unavailable.
	504, // Gateway timeout.
}

// LINT.ThenChange(//depot/google3/third_party/py/google/genai/_api_client.py)

// retryHTTPRequest sends req via do, retrying according to opts.
//
// A nil opts means a single attempt. Retries must be requested explicitly,
// matching the Python and JavaScript SDKs.
//
// Unlike Python, an explicitly zero InitialDelay, MaxDelay, ExpBase or Jitter
// is honored rather than falling back to the default, so that callers can
// disable backoff entirely.
func retryHTTPRequest(req *http.Request, opts *HTTPRetryOptions, do func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if opts == nil {
		return do(req)
	}

	attempts := defaultRetryAttempts
	if opts.Attempts != nil {
		attempts = int(*opts.Attempts)
	}
	if attempts < 1 {
		// Python coerces 0 attempts to 1; treat negatives the same way.
		attempts = 1
	}
	retryableCodes := defaultRetryHTTPStatusCodes
	if len(opts.HTTPStatusCodes) > 0 {
		retryableCodes = opts.HTTPStatusCodes
	}

	ctx := req.Context()
	var resp *http.Response
	var err error
	for attempt := 1; ; attempt++ {
		resp, err = do(req)
		if attempt >= attempts || ctx.Err() != nil {
			break
		}
		if !shouldRetryHTTPRequest(resp, err, retryableCodes) {
			break
		}
		// The body of a discarded response must be closed, otherwise the
		// underlying connection leaks.
		if resp != nil {
			resp.Body.Close()
		}
		if req.GetBody != nil {
			body, bodyErr := req.GetBody()
			if bodyErr != nil {
				return nil, fmt.Errorf("retryHTTPRequest: error rewinding request body: %w", bodyErr)
			}
			req.Body = body
		} else if req.Body != nil {
			// The body cannot be replayed, so a retry would send an empty one.
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryDelay(attempt, opts)):
		}
	}
	return resp, err
}

// shouldRetryHTTPRequest reports whether an attempt is worth repeating.
func shouldRetryHTTPRequest(resp *http.Response, err error, retryableCodes []int32) bool {
	if err != nil {
		// Transport-level failure. Mirrors the Python SDK, which retries
		// httpx.TimeoutException and httpx.ConnectError.
		return true
	}
	if resp == nil {
		return false
	}
	return slices.Contains(retryableCodes, int32(resp.StatusCode))
}

// retryDelay returns how long to wait before the attempt following attempt.
//
// It uses the same exponential-backoff-with-jitter formula as the Python SDK's
// tenacity configuration:
//
//	min(initialDelay*expBase^(attempt-1) + U(0, jitter), maxDelay)
func retryDelay(attempt int, opts *HTTPRetryOptions) time.Duration {
	initialDelay := float64(defaultRetryInitialDelay)
	if opts.InitialDelay != nil {
		initialDelay = *opts.InitialDelay
	}
	maxDelay := float64(defaultRetryMaxDelay)
	if opts.MaxDelay != nil {
		maxDelay = *opts.MaxDelay
	}
	expBase := float64(defaultRetryExpBase)
	if opts.ExpBase != nil {
		expBase = *opts.ExpBase
	}
	jitter := float64(defaultRetryJitter)
	if opts.Jitter != nil {
		jitter = *opts.Jitter
	}

	seconds := initialDelay*math.Pow(expBase, float64(attempt-1)) + rand.Float64()*jitter
	seconds = min(seconds, maxDelay)
	if seconds < 0 {
		seconds = 0
	}
	return time.Duration(seconds * float64(time.Second))
}

func mergeHTTPOptions(clientConfig *ClientConfig, configHTTPOptions *HTTPOptions) *HTTPOptions {
	var clientHTTPOptions *HTTPOptions
	if clientConfig != nil {
		clientHTTPOptions = &(clientConfig.HTTPOptions)
	}

	// TODO(b/422842863): Implement a more flexible HTTPOptions merger.
	result := HTTPOptions{}
	if clientHTTPOptions == nil && configHTTPOptions == nil {
		return nil
	} else if clientHTTPOptions == nil {
		result = HTTPOptions{
			BaseURL:               configHTTPOptions.BaseURL,
			APIVersion:            configHTTPOptions.APIVersion,
			ExtrasRequestProvider: configHTTPOptions.ExtrasRequestProvider,
			RetryOptions:          configHTTPOptions.RetryOptions,
		}
	} else {
		result = HTTPOptions{
			BaseURL:               clientHTTPOptions.BaseURL,
			APIVersion:            clientHTTPOptions.APIVersion,
			ExtrasRequestProvider: clientHTTPOptions.ExtrasRequestProvider,
			RetryOptions:          clientHTTPOptions.RetryOptions,
		}
	}

	if configHTTPOptions != nil {
		if configHTTPOptions.BaseURL != "" {
			result.BaseURL = configHTTPOptions.BaseURL
		}
		if configHTTPOptions.APIVersion != "" {
			result.APIVersion = configHTTPOptions.APIVersion
		}
		if configHTTPOptions.ExtrasRequestProvider != nil {
			result.ExtrasRequestProvider = configHTTPOptions.ExtrasRequestProvider
		}
		if configHTTPOptions.RetryOptions != nil {
			result.RetryOptions = configHTTPOptions.RetryOptions
		}
	}
	result.Headers = mergeHeaders(clientHTTPOptions, configHTTPOptions)
	return &result
}

func mergeHeaders(clientHTTPOptions *HTTPOptions, configHTTPOptions *HTTPOptions) http.Header {
	result := http.Header{}
	if clientHTTPOptions == nil && configHTTPOptions == nil {
		return result
	}

	if clientHTTPOptions != nil {
		doMergeHeaders(clientHTTPOptions.Headers, &result)
	}
	// configHTTPOptions takes precedence over clientHTTPOptions.
	if configHTTPOptions != nil {
		doMergeHeaders(configHTTPOptions.Headers, &result)
	}
	return result
}

func doMergeHeaders(input http.Header, output *http.Header) {
	for k, v := range input {
		for _, vv := range v {
			output.Add(k, vv)
		}
	}
}

// moveValueByPath moves values from source paths to destination paths.
//
// Examples:
//
//	moveValueByPath(
//	  map[string]any{"requests": []any{map[string]any{"content": "v1"}, map[string]any{"content": "v2"}}},
//	  map[string]string{"requests[].*": "requests[].request.*"}
//	)
//	  -> {"requests": [{"request": {"content": "v1"}}, {"request": {"content": "v2"}}]}
func moveValueByPath(data any, paths map[string]string) {
	for sourcePath, destPath := range paths {
		sourceKeys := strings.Split(sourcePath, ".")
		destKeys := strings.Split(destPath, ".")

		// Determine keys to exclude from wildcard to avoid cyclic references
		excludeKeys := make(map[string]bool)
		wildcardIdx := -1
		for i, key := range sourceKeys {
			if key == "*" {
				wildcardIdx = i
				break
			}
		}

		if wildcardIdx != -1 && len(destKeys) > wildcardIdx {
			// Extract the intermediate key between source and dest paths
			// Example: source=["requests[]", "*"], dest=["requests[]", "request", "*"]
			// We want to exclude "request"
			for i := wildcardIdx; i < len(destKeys); i++ {
				key := destKeys[i]
				if key != "*" && !strings.HasSuffix(key, "[]") && !strings.HasSuffix(key, "[0]") {
					excludeKeys[key] = true
				}
			}
		}

		moveValueRecursive(data, sourceKeys, destKeys, 0, excludeKeys)
	}
}

// moveValueRecursive recursively moves values from source path to destination path.
func moveValueRecursive(data any, sourceKeys []string, destKeys []string, keyIdx int, excludeKeys map[string]bool) {
	if keyIdx >= len(sourceKeys) {
		return
	}

	key := sourceKeys[keyIdx]

	if strings.HasSuffix(key, "[]") {
		keyName := key[:len(key)-2]
		if dataMap, ok := data.(map[string]any); ok {
			if sliceData, exists := dataMap[keyName]; exists {
				switch slice := sliceData.(type) {
				case []any:
					for _, item := range slice {
						moveValueRecursive(item, sourceKeys, destKeys, keyIdx+1, excludeKeys)
					}
				case []map[string]any:
					for _, item := range slice {
						moveValueRecursive(item, sourceKeys, destKeys, keyIdx+1, excludeKeys)
					}
				}
			}
		}
	} else if key == "*" {
		// Handle wildcard - move all fields
		if dataMap, ok := data.(map[string]any); ok {
			keysToMove := []string{}
			for k := range dataMap {
				if !strings.HasPrefix(k, "_") && !excludeKeys[k] {
					keysToMove = append(keysToMove, k)
				}
			}
			valuesToMove := make(map[string]any)
			for _, k := range keysToMove {
				valuesToMove[k] = dataMap[k]
			}

			// Set values at destination
			for k, v := range valuesToMove {
				newDestKeys := []string{}
				for _, dk := range destKeys[keyIdx:] {
					if dk == "*" {
						newDestKeys = append(newDestKeys, k)
					} else {
						newDestKeys = append(newDestKeys, dk)
					}
				}
				setValueByPath(dataMap, newDestKeys, v)
			}

			for _, k := range keysToMove {
				delete(dataMap, k)
			}
		}
	} else {
		// Navigate to next level
		if dataMap, ok := data.(map[string]any); ok {
			if nextData, exists := dataMap[key]; exists {
				moveValueRecursive(nextData, sourceKeys, destKeys, keyIdx+1, excludeKeys)
			}
		}
	}
}

func snakeToCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if len(parts[i]) > 0 {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

//nolint:unused
func convertKeysSnakeToCamel(val any) any {
	switch v := val.(type) {
	case map[string]any:
		res := make(map[string]any)
		for k, val := range v {
			camelK := snakeToCamel(k)
			res[camelK] = convertKeysSnakeToCamel(val)
		}
		return res
	case []any:
		for i, val := range v {
			v[i] = convertKeysSnakeToCamel(val)
		}
		return v
	default:
		return val
	}
}
