// heightmap_common.glsl: the geometry of the height-map builder, shared by its passes.
//
// Pixel (x, y) of the left rectified view with disparity d (px) -> camera point through
// Q ([X Y Z W] = Q [x y d 1], divided by W), then -> pitch point through the pose
// (p = R c + C). heightmap_geometry_pixel_to_pitch() in heightmap/fusion.c is the same
// formula in double precision.

uniform float u_q[16];     // Q, row-major
uniform float u_pose[12];  // R row-major (9), then the camera centre C (3)

// Returns false when W <= 0 (behind the camera or at infinity).
bool heightmap_pixel_to_pitch(vec2 px, float d, out vec3 pitch)
{
  vec4 v = vec4(px, d, 1.0);
  vec4 r = vec4(dot(vec4(u_q[0], u_q[1], u_q[2], u_q[3]), v),
                dot(vec4(u_q[4], u_q[5], u_q[6], u_q[7]), v),
                dot(vec4(u_q[8], u_q[9], u_q[10], u_q[11]), v),
                dot(vec4(u_q[12], u_q[13], u_q[14], u_q[15]), v));
  if (!(r.w > 0.0))
    return false;
  vec3 c = r.xyz / r.w;
  pitch = vec3(dot(vec3(u_pose[0], u_pose[1], u_pose[2]), c),
               dot(vec3(u_pose[3], u_pose[4], u_pose[5]), c),
               dot(vec3(u_pose[6], u_pose[7], u_pose[8]), c)) +
          vec3(u_pose[9], u_pose[10], u_pose[11]);
  return true;
}
