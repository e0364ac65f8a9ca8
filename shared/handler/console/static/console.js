// The console's only script: ask before a form that changes something is sent.
// A form with data-confirm is sent only when the salon says yes; {slot} in the
// question is the time of the slot chosen in the form (改约: the question names
// the new time). Without this script the forms still work; they are just not
// asked about.
document.addEventListener('submit', function (e) {
  var form = e.target;
  var question = form.getAttribute('data-confirm');
  var chosen = form.elements.slot && form.elements.slot.selectedOptions && form.elements.slot.selectedOptions[0];
  if (question && chosen) {
    question = question.replace('{slot}', chosen.getAttribute('data-when') || chosen.textContent);
  }
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

// Today's list opens at the slot under way (the server marks the first slot
// that has not ended with data-now), not at the morning's past slots; a page
// that names a row (#bk-17 after a change) goes to that row instead.
(function () {
  var now = document.querySelector('[data-now]');
  if (now && !window.location.hash) now.scrollIntoView({ block: 'start' });
})();

// The door's check-in page: where the browser can read QR codes
// (BarcodeDetector) and open a camera, "扫码" reads the customer's code into
// the field and sends it (asked first, like every change), and the hint says
// so; elsewhere the button stays hidden and the hint says to type the 8
// digits (the page's own words).
(function () {
  var form = document.getElementById('door');
  var scan = document.getElementById('scan');
  if (!form || !scan || !('BarcodeDetector' in window) || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    return;
  }
  var hint = document.getElementById('scan-hint');
  if (hint) hint.textContent = '顾客在小程序里打开当天的预约，出示二维码或 8 位数字：输入这 8 位数字，或点「扫码」用摄像头读二维码。';
  var video = document.getElementById('camera');
  var status = document.getElementById('scan-status');
  var say = function (text) { status.textContent = text; status.hidden = false; };
  scan.hidden = false;
  scan.addEventListener('click', function () {
    var detector = new window.BarcodeDetector({ formats: ['qr_code'] });
    navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false }).then(function (stream) {
      var stop = function () { stream.getTracks().forEach(function (t) { t.stop(); }); video.hidden = true; };
      video.srcObject = stream;
      video.hidden = false;
      var played = video.play();
      if (played && played.catch) played.catch(function () {});
      say('请把顾客的二维码对准摄像头');
      var look = function () {
        detector.detect(video).then(function (codes) {
          for (var i = 0; i < codes.length; i++) {
            var v = String(codes[i].rawValue || '').trim();
            if (/^[0-9]{8}$/.test(v)) {
              stop();
              form.elements.code.value = v;
              say('已读到签到码 ' + v);
              form.requestSubmit();
              return;
            }
          }
          setTimeout(look, 250);
        }, function () {
          stop();
          say('无法识别二维码，请直接输入数字');
        });
      };
      look();
    }, function () {
      say('无法打开摄像头，请直接输入数字');
    });
  });
})();
