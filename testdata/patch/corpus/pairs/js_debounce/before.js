import { fetchResults } from "./api.js";

const input = document.querySelector("#search");
const list = document.querySelector("#results");

function render(results) {
  list.innerHTML = "";
  for (const r of results) {
    const li = document.createElement("li");
    li.textContent = r.title;
    list.appendChild(li);
  }
}

async function onInput(event) {
  const query = event.target.value.trim();
  if (query === "") {
    render([]);
    return;
  }
  const results = await fetchResults(query);
  render(results);
}

input.addEventListener("input", onInput);
