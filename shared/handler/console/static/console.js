// The console's only script: ask before a form that changes something is sent.
// A form with data-confirm is sent only when the salon says yes. Without this
// script the forms still work; they are just not asked about.
document.addEventListener('submit', function (e) {
  var form = e.target;
  var question = form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) {
    e.preventDefault();
    return;
  }
  // One press, one request: a double tap at the door must not send the change twice.
  var buttons = form.querySelectorAll('button');
  setTimeout(function () {
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
  }, 0);
});
