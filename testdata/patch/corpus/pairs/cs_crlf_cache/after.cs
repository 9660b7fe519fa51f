using System;
using System.Collections.Generic;

namespace Demo
{
    public class Cache
    {
        private readonly Dictionary<string, string> items = new();

        public string? Get(string key)
        {
            return items.TryGetValue(key, out var v) ? v : null;
        }

        public void Put(string key, string value)
        {
            if (value == null) throw new ArgumentNullException(nameof(value));
            items[key] = value;
        }

        public int Count => items.Count;
    }
}
