// Unit tests of the console's JSON Schema form renderer, run in the browser by
// tests/console.rs against the module the server ships. Each construct that appears in
// the connectors' schemas is covered; then every connector's forms render.
// The test runs it as a WebDriver script: `run(origin, token)` resolves with the
// failures (empty when all pass) and counts.

async function run(origin, token) {
  const { model, createForm, pickVariant, walk } = await import(`${origin}/console/js/form.js`);
  const failures = [];
  let passed = 0;
  const test = (name, fn) => {
    try {
      fn();
      passed += 1;
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
    }
  };
  const eq = (a, b, what = "") => {
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    if (x !== y) throw new Error(`${what} expected ${y}, got ${x}`);
  };
  const ok = (v, what) => {
    if (!v) throw new Error(what);
  };
  const mount = (form) => {
    const holder = document.createElement("div");
    holder.append(form.element);
    document.body.append(holder);
    return holder;
  };
  const input = (holder, label) => {
    const l = [...holder.querySelectorAll("label")].find((x) => x.textContent.replace(/\s*\*$/, "").trim().startsWith(label));
    if (!l) throw new Error(`no label ${label}`);
    return l.control || document.getElementById(l.htmlFor);
  };
  const type = (el, value) => {
    el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  };

  test("objects: properties, required, titles and descriptions", () => {
    const m = model({ type: "object", required: ["topic"], properties: { topic: { type: "string", title: "Topic", description: "The topic" }, group_id: { type: "string" } } });
    eq(m.kind, "object");
    eq(m.fields.map((f) => [f.key, f.kind, f.required, f.pointer]), [["topic", "text", true, "/topic"], ["group_id", "text", false, "/group_id"]]);
    eq(m.fields[1].title, "Group id", "a title from the key");
    const form = createForm({ type: "object", required: ["topic"], properties: { topic: { type: "string", title: "Topic", description: "The topic" } } });
    const holder = mount(form);
    const topic = input(holder, "Topic");
    ok(topic.getAttribute("aria-required") === "true", "required inputs say so");
    ok(holder.querySelector("label .req"), "required labels are marked");
    ok(document.getElementById(topic.getAttribute("aria-describedby").split(" ")[0]).textContent === "The topic", "the description is the input's help");
    eq(form.validate().map((e) => e.pointer), ["/topic"], "a missing required value");
    type(topic, "orders");
    eq(form.value(), { topic: "orders" });
    eq(form.validate(), []);
    holder.remove();
  });

  test("enums are selects, with defaults", () => {
    const schema = { type: "object", properties: { offset: { type: "string", enum: ["latest", "earliest"], default: "latest", title: "Offset" } } };
    const holder = mount(createForm(schema));
    const select = input(holder, "Offset");
    eq(select.tagName, "SELECT");
    eq([...select.options].map((o) => o.value), ["", "latest", "earliest"]);
    eq(select.value, "latest", "the default is chosen");
    holder.remove();
  });

  test("oneOf is a choice of variants, and the value is the chosen variant's", () => {
    const schema = {
      type: "object",
      properties: {
        type: {
          title: "Table Type",
          type: "object",
          oneOf: [
            { title: "Source", type: "object", required: ["offset"], properties: { offset: { type: "string", enum: ["latest", "earliest"], default: "latest", title: "Offset" } } },
            { title: "Sink", type: "object", properties: { commit_mode: { type: "string", enum: ["at_least_once", "exactly_once"], default: "at_least_once", title: "Commit Mode" } } },
          ],
        },
      },
    };
    const m = model(schema);
    eq(m.fields[0].kind, "choice");
    eq(m.fields[0].variants.map((v) => v.title), ["Source", "Sink"]);
    eq(pickVariant(m.fields[0], { commit_mode: "exactly_once" }), 1, "a value picks its variant");
    const form = createForm(schema);
    const holder = mount(form);
    eq(form.value(), { type: { offset: "latest" } });
    const choice = input(holder, "Table Type");
    choice.value = "1";
    choice.dispatchEvent(new Event("change"));
    eq(form.value(), { type: { commit_mode: "at_least_once" } }, "after choosing Sink");
    const again = createForm(schema, { value: { type: { commit_mode: "exactly_once" } } });
    eq(again.value(), { type: { commit_mode: "exactly_once" } }, "a stored value shows its variant");
    holder.remove();
  });

  test("sensitive var-str fields are password inputs with the {{ VAR }} hint", () => {
    const schema = { type: "object", sensitive: ["password"], properties: { password: { type: "string", format: "var-str", title: "Password" }, username: { type: "string", format: "var-str", title: "Username" } } };
    const holder = mount(createForm(schema));
    eq(input(holder, "Password").type, "password");
    eq(input(holder, "Username").type, "text");
    ok(holder.textContent.includes("{{ VAR }}"), "the hint names {{ VAR }}");
    const editing = createForm(schema, { value: { password: "********" }, editing: true });
    eq(editing.value(), {}, "a redacted secret left alone is not sent");
    eq(editing.validate(), [], "a stored secret is not required again");
    holder.remove();
  });

  test("numbers and integers, with their bounds", () => {
    const schema = { type: "object", properties: { rate: { type: "number", minimum: 0, title: "Rate" }, count: { type: "integer", minimum: 1, maximum: 10, title: "Count" } } };
    const form = createForm(schema);
    const holder = mount(form);
    type(input(holder, "Rate"), "2.5");
    type(input(holder, "Count"), "11");
    eq(form.value(), { rate: 2.5, count: 11 });
    eq(form.validate().map((e) => e.pointer), ["/count"]);
    ok(holder.querySelector(".invalid .field-error").textContent.includes("at most 10"), "the error is beside its field");
    type(input(holder, "Count"), "1.5");
    eq(form.validate().map((e) => e.message), ["Count must be a whole number"]);
    holder.remove();
  });

  test("booleans are checkboxes sent when they differ from the default", () => {
    const schema = { type: "object", properties: { retain: { type: "boolean", default: false, title: "Retain" } } };
    const form = createForm(schema);
    const holder = mount(form);
    const box = input(holder, "Retain");
    eq(box.type, "checkbox");
    eq(form.value(), {});
    box.checked = true;
    eq(form.value(), { retain: true });
    holder.remove();
  });

  test("patterns, minLength and maxLength", () => {
    const schema = { type: "object", properties: { servers: { type: "string", pattern: "^[a-z]+:\\d+$", examples: ["k:9092"], title: "Servers" }, name: { type: "string", minLength: 2, maxLength: 3, title: "Name" } } };
    const form = createForm(schema);
    const holder = mount(form);
    eq(input(holder, "Servers").placeholder, "k:9092", "an example is the placeholder");
    type(input(holder, "Servers"), "nope");
    type(input(holder, "Name"), "x");
    eq(form.validate().map((e) => e.pointer), ["/servers", "/name"]);
    type(input(holder, "Servers"), "{{ SERVERS }}");
    type(input(holder, "Name"), "abcd");
    eq(form.validate().map((e) => e.pointer), ["/name"], "a {{ VAR }} reference is not checked against the pattern");
    holder.remove();
  });

  test("free string maps are key/value editors", () => {
    const schema = { type: "object", properties: { props: { type: "object", title: "Properties", additionalProperties: { type: "string" } } } };
    eq(model(schema).fields[0].kind, "map");
    const form = createForm(schema, { value: { props: { "acks": "all" } } });
    const holder = mount(form);
    eq(form.value(), { props: { acks: "all" } });
    holder.remove();
  });

  test("arrays of strings and of objects", () => {
    const schema = { type: "object", properties: { subjects: { type: "array", items: { type: "string" }, title: "Subjects" }, headers: { type: "array", items: { type: "object", properties: { name: { type: "string" } } }, title: "Headers" } } };
    const m = model(schema);
    eq(m.fields.map((f) => [f.kind, f.item.kind]), [["list", "text"], ["list", "object"]]);
    const form = createForm(schema, { value: { subjects: ["a.b", "c"] } });
    const holder = mount(form);
    eq(form.value(), { subjects: ["a.b", "c"] });
    holder.remove();
  });

  test("dependentRequired and nested objects", () => {
    const schema = { type: "object", dependentRequired: { password: ["username"] }, properties: { username: { type: "string", title: "Username" }, password: { type: "string", title: "Password" }, tls: { type: "object", title: "TLS", properties: { ca: { type: "string", title: "CA" } } } } };
    const form = createForm(schema);
    const holder = mount(form);
    type(input(holder, "Password"), "x");
    eq(form.validate().map((e) => e.pointer), ["/username"]);
    type(input(holder, "CA"), "/etc/ca.pem");
    eq(form.value().tls, { ca: "/etc/ca.pem" });
    holder.remove();
  });

  test("server errors go beside the field their pointer names", () => {
    const schema = { type: "object", properties: { tls: { type: "object", title: "TLS", properties: { ca: { type: "string", title: "CA" } } }, url: { type: "string", title: "URL" } } };
    const form = createForm(schema);
    const holder = mount(form);
    const rest = form.setErrors([{ pointer: "/tls/ca", message: "only for ssl://" }, { pointer: "/elsewhere/deep", message: "no field" }]);
    const ca = input(holder, "CA");
    ok(ca.getAttribute("aria-invalid") === "true", "the field is marked invalid");
    ok(ca.closest(".field").querySelector(".field-error").textContent === "only for ssl://", "its message is beside it");
    eq(rest.map((r) => r.message), ["no field"], "an error no field takes is handed back");
    holder.remove();
  });

  test("unknown constructs are edited as JSON", () => {
    const m = model({ type: "object", properties: { odd: { anyOf: [{ type: "string" }, { type: "integer" }], title: "Odd" } } });
    eq(m.fields[0].kind, "json");
    const form = createForm({ type: "object", properties: { odd: { anyOf: [{ type: "string" }] } } }, { value: { odd: [1, 2] } });
    eq(form.value(), { odd: [1, 2] });
  });

  // Every connector's forms render, and every field of them has a label.
  const answer = await fetch(`${origin}/api/v1/connectors`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const connectors = (await answer.json()).data;
  let forms = 0;
  for (const c of connectors) {
    for (const [which, text] of [["table", c.table_config], ["profile", c.connection_config]]) {
      if (!text) continue;
      test(`${c.id} ${which} form`, () => {
        const schema = JSON.parse(text);
        const form = createForm(schema);
        const holder = mount(form);
        let count = 0;
        walk(form.tree, () => (count += 1));
        ok(count > 0, "a tree");
        for (const el of holder.querySelectorAll("input, select, textarea")) {
          const labelled = el.labels?.length || el.getAttribute("aria-label");
          ok(labelled, `an unlabelled ${el.tagName} in ${c.id} ${which}`);
        }
        form.value();
        form.validate();
        holder.remove();
        forms += 1;
      });
    }
  }
  return { failures, passed, forms, connectors: connectors.length };
}
