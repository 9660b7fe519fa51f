using System;
using System.Collections.Generic;

namespace Demo
{
    public class Cache
    {
        private readonly Dictionary<string, string> items = new();

        public string Get(string key)
        {
            return items[key];
        }

        public void Put(string key, string value)
        {
            items[key] = value;
        }
    }
}
