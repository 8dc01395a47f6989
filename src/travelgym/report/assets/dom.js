// DOM helpers of the viewer: $(id), el(tag, props, ...children) and add(node, child).
function $(id) { return document.getElementById(id); }
function el(tag, props) {
  var node = document.createElement(tag);
  if (props) {
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === undefined || v === null) return;
      if (k === 'text') node.textContent = v;
      else if (k === 'cls') node.className = v;
      else if (k === 'on') Object.keys(v).forEach(function (e) { node.addEventListener(e, v[e]); });
      else node.setAttribute(k, v);
    });
  }
  for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
  return node;
}
function add(node, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { add(node, c); }); return; }
  node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
}
